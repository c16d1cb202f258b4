/**
 * The SQLite store's working keys, held in memory so the server's key check
 * never waits on the file: each current key's hash (to null) and each key in
 * its grace period (to its end, which `Keys` compares with its clock). A key
 * whose end has passed is forgotten: a check of it then finds no answer here
 * and is refused, as `Keys` would refuse it. The store changes this view in
 * the same synchronous step that commits its own writes, and applies other
 * processes' changes as it finds them.
 */
import type { KeyEnd } from '../contract.ts';

export class WorkingKeys {
  /** A current key's hash to null, a key in its grace period's to its end. */
  private readonly ends = new Map<string, number | null>();
  /** The hashes in `ends` that have an end, dropped once their end has passed. */
  private readonly graced = new Set<string>();

  /** The key's end as held: null while current, its end in its grace period, undefined for any other hash. */
  end(hash: string): KeyEnd {
    return this.ends.get(hash);
  }

  /** How many current keys are held (keys in their grace period left out). */
  get currentCount(): number {
    return this.ends.size - this.graced.size;
  }

  /** Records a key's end: kept while current or still to come, forgotten once past. */
  set(hash: string, end: number | null): void {
    if (end !== null && end <= Date.now()) {
      this.ends.delete(hash);
      this.graced.delete(hash);
      return;
    }
    this.ends.set(hash, end);
    if (end === null) this.graced.delete(hash);
    else this.graced.add(hash);
  }

  /**
   * Records an end another process wrote: whether that stopped a key held
   * as working here, or moved its end earlier (the server purges its shared
   * answers then).
   */
  change(hash: string, end: number | null): boolean {
    const was = this.ends.get(hash);
    this.set(hash, end);
    return end !== null && was !== undefined && (was === null || end < was);
  }

  /** Forgets keys whose grace period is over. */
  forgetEnded(): void {
    if (this.graced.size === 0) return;
    const now = Date.now();
    for (const hash of this.graced) {
      const end = this.ends.get(hash);
      if (end === null || end === undefined || end <= now) {
        this.graced.delete(hash);
        if (end !== null) this.ends.delete(hash);
      }
    }
  }
}
