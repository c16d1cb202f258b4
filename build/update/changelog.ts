/**
 * Appends a data update's report to CHANGELOG.md, under "Data" in its
 * Unreleased release, whatever else the file holds: the entry goes at the end
 * of that section, the section (and the Unreleased release) is made where
 * missing, and a file that does not exist yet is started with a Keep a
 * Changelog header.
 */
import fs from 'fs-extra';
import { writeWhole } from '../../lib/write-whole.ts';

export const CHANGELOG_HEADER = `# Changelog

All notable changes to this project are documented in this file.

The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).
`;

/** Where the heading at `at` ends: the next heading of its level or higher, or the end. */
function sectionEnd(lines: string[], at: number, level: number): number {
  for (let i = at + 1; i < lines.length; i++) {
    const heading = lines[i].match(/^(#+) /);
    if (heading && heading[1].length <= level) return i;
  }
  return lines.length;
}

/** `block` put at the end of lines[from, to), after its trailing blank lines are dropped, one blank line around it. */
function appendToSection(lines: string[], from: number, to: number, block: string[]): string[] {
  let end = to;
  while (end > from + 1 && lines[end - 1].trim() === '') end--;
  const rest = lines.slice(to);
  return [...lines.slice(0, end), '', ...block, ...(rest.length ? ['', ...rest] : [])];
}

/**
 * The text of `changelog` with `title` and `body` added as the last entry of
 * the Data section of its Unreleased release: a new revision ships with the
 * next release, never inside one already made. The section, and the
 * Unreleased release, are made where missing (Unreleased before the first
 * release, Data at the end of Unreleased).
 */
export function withDataEntry(changelog: string, title: string, body: string): string {
  let lines = changelog.replace(/\s+$/, '').split('\n');
  let unreleased = lines.findIndex((line) => /^## +\[?Unreleased\]? *$/i.test(line));
  if (unreleased === -1) {
    const firstRelease = lines.findIndex((line) => /^## /.test(line));
    unreleased = firstRelease === -1 ? lines.length + 1 : firstRelease;
    lines =
      firstRelease === -1
        ? [...lines, '', '## [Unreleased]']
        : [...lines.slice(0, unreleased), '## [Unreleased]', '', ...lines.slice(unreleased)];
  }
  const end = sectionEnd(lines, unreleased, 2);
  const entry = [`#### ${title}`, '', ...body.trimEnd().split('\n')];
  const data = lines.findIndex((line, i) => i > unreleased && i < end && /^### +Data *$/i.test(line));
  const changed =
    data === -1
      ? appendToSection(lines, unreleased, end, ['### Data', '', ...entry])
      : appendToSection(lines, data, sectionEnd(lines, data, 3), entry);
  return `${changed.join('\n')}\n`;
}

/** Appends the entry to the file (written whole through a temporary file), creating it when missing. */
export async function appendToChangelog(file: string, title: string, body: string): Promise<void> {
  const text = (await fs.pathExists(file)) ? await fs.readFile(file, 'utf8') : CHANGELOG_HEADER;
  await writeWhole(file, withDataEntry(text, title, body));
}
