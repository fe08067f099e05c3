/**
 * Lookups by key asked in the same turn of the event loop, answered by one `load` of all their
 * keys: a listing that asks each of its N collections' counts at once (Promise.all) makes one
 * round trip to the database instead of N, each of which waited for a pooled connection beside
 * the ingestion's writes. A key asked twice in a turn is loaded once. `load` answers every key
 * it was given (or rejects, and so does every waiting lookup).
 */
export class KeyedBatch<T> {
  private waiting: Map<string, Array<{ resolve: (value: T) => void; reject: (error: unknown) => void }>> | null = null;

  constructor(private readonly load: (keys: string[]) => Promise<Map<string, T>>) {}

  get(key: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!this.waiting) {
        this.waiting = new Map();
        // After the microtasks already queued: callers resuming from the same await join this batch.
        process.nextTick(() => void this.flush());
      }
      const callers = this.waiting.get(key) ?? [];
      callers.push({ resolve, reject });
      this.waiting.set(key, callers);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting!;
    this.waiting = null;
    try {
      const values = await this.load([...batch.keys()]);
      for (const [key, callers] of batch) {
        if (!values.has(key)) throw new Error(`the batch answered no value for ${key}`);
        for (const caller of callers) caller.resolve(values.get(key)!);
      }
    } catch (error) {
      for (const callers of batch.values()) for (const caller of callers) caller.reject(error);
    }
  }
}
