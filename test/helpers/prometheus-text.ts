// Issue 29: /metrics read as Prometheus reads it, by a parser of the text format that is not the
// library that wrote it (prom-client cannot parse): the Prometheus project's Python client, from
// Debian (`apt-get install python3-prometheus-client`), run by Debian's /usr/bin/python3. (The npm
// package parse-prometheus-text-format, tried first, loses the labels of labelled histograms.)
import { spawnSync } from 'node:child_process';

export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly samples: readonly Sample[];
}

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
# NaN and ±Inf are legal sample values (prom-client's event-loop figures are NaN before any sample)
# but not JSON: they travel as text and are turned back into numbers below.
def value(v):
    return v if math.isfinite(v) else str(v)
families = [
    {"name": f.name, "type": f.type, "help": f.documentation,
     "samples": [{"name": s.name, "labels": s.labels, "value": value(s.value)} for s in f.samples]}
    for f in text_string_to_metric_families(sys.stdin.read())
]
json.dump(families, sys.stdout)
`;

/** The families of an exposition, by name (a counter's without its _total); throws on text it cannot read. */
export function parseExposition(text: string): Map<string, MetricFamily> {
  const run = spawnSync('/usr/bin/python3', ['-c', PARSE], {
    input: text,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (run.status !== 0)
    throw new Error(
      `the Prometheus text parser refused /metrics (python3-prometheus-client installed?): ${run.stderr || run.error?.message}`,
    );
  const NON_FINITE: Record<string, number> = { nan: NaN, inf: Infinity, '-inf': -Infinity };
  const families = JSON.parse(run.stdout, (key, value: unknown) =>
    key === 'value' && typeof value === 'string' ? NON_FINITE[value] : value,
  ) as MetricFamily[];
  return new Map(families.map((family) => [family.name, family]));
}

/** The samples named `sample` (e.g. a histogram's `…_count`) whose labels include `labels`. */
export function samplesOf(
  families: ReadonlyMap<string, MetricFamily>,
  sample: string,
  labels: Record<string, string> = {},
): readonly Sample[] {
  return [...families.values()]
    .flatMap((family) => family.samples)
    .filter(
      (s) => s.name === sample && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
    );
}

/** The sum of the samples named `sample` with those labels (0 when none). */
export function valueOf(
  families: ReadonlyMap<string, MetricFamily>,
  sample: string,
  labels: Record<string, string> = {},
): number {
  return samplesOf(families, sample, labels).reduce((sum, s) => sum + s.value, 0);
}
