/**
 * A map bounded by the total `size` of its values, dropping the oldest
 * entries first. `get` refreshes an entry's place;
 * `peek` does not, for hot paths where that bookkeeping costs more than it saves.
 */
export class ByteLru<V extends { size: number }> {
  private readonly map = new Map<string, V>();
  private total = 0;
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Sum of the sizes held now. */
  get bytes(): number {
    return this.total;
  }

  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  peek(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    if (value.size > this.maxBytes) return;
    this.delete(key);
    this.map.set(key, value);
    this.total += value.size;
    for (const [k, v] of this.map) {
      if (this.total <= this.maxBytes) break;
      this.map.delete(k);
      this.total -= v.size;
    }
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }

  delete(key: string): void {
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.total -= old.size;
    }
  }
}
