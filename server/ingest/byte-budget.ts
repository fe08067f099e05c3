/**
 * A budget of bytes shared by concurrent work, first come first served: acquire() waits
 * until the bytes fit. A request larger than the whole budget takes all of it, so a huge
 * file runs alone rather than never.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: Array<{ bytes: number; grant: () => void }> = [];

  constructor(private readonly limit: number) {}

  /** Resolves with the bytes actually held, to hand back to release(). */
  async acquire(bytes: number): Promise<number> {
    const held = Math.max(0, Math.min(bytes, this.limit));
    if (this.waiting.length === 0 && this.used + held <= this.limit) {
      this.used += held;
      return held;
    }
    await new Promise<void>((grant) => this.waiting.push({ bytes: held, grant }));
    return held;
  }

  release(held: number): void {
    this.used -= held;
    while (this.waiting.length > 0 && this.used + this.waiting[0].bytes <= this.limit) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.grant();
    }
  }

  /** Bytes held right now; for tests. */
  get inUse(): number {
    return this.used;
  }
}
