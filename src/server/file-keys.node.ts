/**
 * Key records in a JSON file (development, tests, self-hosting). The file is
 * re-read when it changes on disk (checked at most once per `recheckMs`), so a
 * running server sees keys issued or revoked by the CLI within seconds.
 */
import { readFile, rename, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { KeyBackend, KeyRecord } from '../keys.ts';

export class FileKeyBackend implements KeyBackend {
  private records = new Map<string, KeyRecord>();
  private mtimeMs = -1;
  private checkedAt = -Infinity;

  constructor(
    readonly file: string,
    private readonly recheckMs = 1000,
  ) {}

  private loading: Promise<void> | null = null;

  /** Re-reads the file if it changed; concurrent callers share one read, so none sees a half-loaded state. */
  private refresh(force = false): Promise<void> {
    if (!force && Date.now() - this.checkedAt < this.recheckMs) return this.loading ?? Promise.resolve();
    this.loading ??= this.load(force).finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async load(force: boolean): Promise<void> {
    const info = await stat(this.file).catch(() => null);
    if (!info) {
      this.records = new Map();
      this.mtimeMs = -1;
    } else if (info.mtimeMs !== this.mtimeMs || force) {
      try {
        const parsed = JSON.parse(await readFile(this.file, 'utf8')) as { keys?: KeyRecord[] };
        this.records = new Map((parsed.keys ?? []).map((r) => [r.id, r]));
        this.mtimeMs = info.mtimeMs;
      } catch {
        // A half-written or hand-broken file: keep the last good records rather than lock everyone out.
      }
    }
    this.checkedAt = Date.now(); // only once the records are in place
  }

  async get(id: string) {
    await this.refresh();
    return this.records.get(id) ?? null;
  }

  async all() {
    await this.refresh(true);
    return [...this.records.values()];
  }

  async put(record: KeyRecord) {
    await this.refresh(true);
    this.records.set(record.id, record);
    await mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ keys: [...this.records.values()] }, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, this.file);
    this.mtimeMs = (await stat(this.file)).mtimeMs;
  }
}
