/**
 * Appends a data update's report to CHANGELOG.md under its "Data" heading,
 * whatever else the file holds: the entry goes at the end of that section
 * (before the next heading of the same or a higher level), the heading is
 * added at the end when there is none, and a file that does not exist yet is
 * started with a Keep a Changelog header.
 */
import fs from 'fs-extra';

export const CHANGELOG_HEADER = `# Changelog

All notable changes to this project are documented in this file.

The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).
`;

/** The text of `changelog` with `title` and `body` added under its Data heading. */
export function withDataEntry(changelog: string, title: string, body: string): string {
  const lines = changelog.replace(/\s+$/, '').split('\n');
  const at = lines.findIndex((line) => /^#{1,5} +Data *$/i.test(line));
  if (at === -1) return `${lines.join('\n')}\n\n## Data\n\n### ${title}\n\n${body.trimEnd()}\n`;
  const level = lines[at].match(/^#+/)![0].length;
  let end = lines.length;
  for (let i = at + 1; i < lines.length; i++) {
    const heading = lines[i].match(/^(#+) /);
    if (heading && heading[1].length <= level) {
      end = i;
      break;
    }
  }
  const rest = lines.slice(end);
  while (end > at + 1 && lines[end - 1].trim() === '') end--;
  const entry = ['', `${'#'.repeat(level + 1)} ${title}`, '', ...body.trimEnd().split('\n')];
  return `${[...lines.slice(0, end), ...entry, ...(rest.length ? ['', ...rest] : [])].join('\n')}\n`;
}

/** Appends the entry to the file (written whole through a temporary file), creating it when missing. */
export async function appendToChangelog(file: string, title: string, body: string): Promise<void> {
  const text = (await fs.pathExists(file)) ? await fs.readFile(file, 'utf8') : CHANGELOG_HEADER;
  await fs.outputFile(`${file}.tmp-${process.pid}`, withDataEntry(text, title, body));
  await fs.rename(`${file}.tmp-${process.pid}`, file);
}
