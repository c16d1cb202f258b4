/**
 * Where data:update puts its report in CHANGELOG.md: under "Data" in the
 * Unreleased release, whatever the rest of the file holds, and in a new Keep a
 * Changelog file when there is none.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendToChangelog, withDataEntry } from '../../build/update/changelog.ts';
import { tempDir } from '../helpers/temp.ts';

const REPORT = 'Ceremonies added:\n- 2027 (99th ceremony): 1 categories, 2 nominations, 1 winners\n';

describe('a data entry in the changelog', () => {
  it('starts a missing CHANGELOG.md with a Keep a Changelog header, an Unreleased release and its Data section', async () => {
    const file = path.join(await tempDir('changelog'), 'CHANGELOG.md');
    await appendToChangelog(file, '2027-03-23: oscars.csv at abc', REPORT);
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(
      /^# Changelog\n[\s\S]*keepachangelog\.com[\s\S]*\n## \[Unreleased\]\n\n### Data\n\n#### 2027-03-23: oscars.csv at abc\n\nCeremonies added:\n- 2027/,
    );
  });

  it('goes at the end of an existing Data section, one level below it, before the next section', () => {
    const before =
      '# Changelog\n\n## [Unreleased]\n\n### Data\n\n#### 2026-04-23: oscars.csv at old\n\nold report\n\n### Fixed\n\n- a fix\n\n## [1.0.0]\n';
    const after = withDataEntry(before, '2027-03-23: oscars.csv at new', REPORT);
    expect(after).toBe(
      '# Changelog\n\n## [Unreleased]\n\n### Data\n\n#### 2026-04-23: oscars.csv at old\n\nold report\n\n#### 2027-03-23: oscars.csv at new\n\n' +
        `${REPORT}\n### Fixed\n\n- a fix\n\n## [1.0.0]\n`,
    );
  });

  it('adds a Data section at the end of Unreleased when it has none, leaving the rest as it was', () => {
    const before =
      '# Changelog\n\n## [Unreleased]\n\n### Added\n\n- a feature\n\n## [1.0.0] - 2026-11-22\n\n### Added\n\n- the API\n';
    expect(withDataEntry(before, 't', REPORT)).toBe(
      `# Changelog\n\n## [Unreleased]\n\n### Added\n\n- a feature\n\n### Data\n\n#### t\n\n${REPORT}\n## [1.0.0] - 2026-11-22\n\n### Added\n\n- the API\n`,
    );
  });

  it('never adds to the Data section of a release already made: a new Unreleased release takes the entry', () => {
    const before = '# Changelog\n\nIntro.\n\n## [1.0.0] - 2026-11-22\n\n### Data\n\n- revision c5e9716\n';
    expect(withDataEntry(before, 't', REPORT)).toBe(
      `# Changelog\n\nIntro.\n\n## [Unreleased]\n\n### Data\n\n#### t\n\n${REPORT}\n## [1.0.0] - 2026-11-22\n\n### Data\n\n- revision c5e9716\n`,
    );
    expect(withDataEntry('# Changelog\n', 't', REPORT)).toBe(
      `# Changelog\n\n## [Unreleased]\n\n### Data\n\n#### t\n\n${REPORT}`,
    );
  });
});
