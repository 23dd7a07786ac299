// R2: failed authentications counted per client address in fixed windows. Past the limit, every
// request from that address gets 429 until the window ends, even with a valid key.
// (@fastify/rate-limit counts every request and cannot look at a count without adding to it.)

export interface FailureWindow {
  readonly count: number;
  /** Seconds until the window ends. */
  readonly resetS: number;
}

export interface AuthFailureCounter {
  peek(address: string): Promise<FailureWindow>;
  add(address: string): Promise<FailureWindow>;
}

export class MemoryAuthFailureCounter implements AuthFailureCounter {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();

  constructor(
    private readonly windowS: number,
    private readonly now: () => number = Date.now,
  ) {}

  private current(address: string): { count: number; endsAt: number } | undefined {
    const window = this.windows.get(address);
    if (window && window.endsAt > this.now()) return window;
    this.windows.delete(address);
    return undefined;
  }

  private view(window: { count: number; endsAt: number } | undefined): FailureWindow {
    if (!window) return { count: 0, resetS: this.windowS };
    return { count: window.count, resetS: Math.max(1, Math.ceil((window.endsAt - this.now()) / 1000)) };
  }

  async peek(address: string): Promise<FailureWindow> {
    return this.view(this.current(address));
  }

  async add(address: string): Promise<FailureWindow> {
    let window = this.current(address);
    if (!window) {
      if (this.windows.size > 100_000) this.windows.clear(); // bounded memory under a flood of addresses
      window = { count: 0, endsAt: this.now() + this.windowS * 1000 };
      this.windows.set(address, window);
    }
    window.count++;
    return this.view(window);
  }
}
