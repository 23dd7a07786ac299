// Tables derived from a snapshot part's columns (issue 28: its quarter-hour sums, its customers'
// bounds), each built once, on first use, per set of settings (the statuses S1 excludes), the
// last `kept` sets asked kept. A part's columns never change (a delta retires runs and orders with
// flags, on a copy of the part that shares them), so its `seconds` array stands for them, and a
// table lives as long as they do.
import type { Part } from './snapshot.js';

export class PartTables<T> {
  private readonly tables = new WeakMap<Float64Array, Map<string, Promise<T>>>();
  /** Tables built, by their promise: what a report may use without waiting. */
  private readonly built = new WeakMap<Promise<T>, T>();

  constructor(private readonly kept: number) {}

  /** The part's table for these settings, its build started with `build` if there is none. */
  of(part: Part, settings: string, build: () => Promise<T>): Promise<T> {
    let bySettings = this.tables.get(part.seconds);
    if (!bySettings) this.tables.set(part.seconds, (bySettings = new Map()));
    let table = bySettings.get(settings);
    if (!table) {
      if (bySettings.size >= this.kept) bySettings.delete(bySettings.keys().next().value as string);
      const building = build();
      building.then(
        (done) => this.built.set(building, done),
        () => bySettings?.delete(settings), // tried again by the next report
      );
      table = building;
      bySettings.set(settings, table);
    }
    return table;
  }

  /** The part's table for these settings if it is built already, else undefined, its build started. */
  ready(part: Part, settings: string, build: () => Promise<T>): T | undefined {
    return this.built.get(this.of(part, settings, build));
  }
}
