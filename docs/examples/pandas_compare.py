"""Month over month with PC1: each month's figures beside the month before, in one request.

The main period covers months 2..n and the custom comparison months 1..n-1: the k-th month of
one is matched with the k-th of the other (PC1), so each row holds a month and the month before
it. Months of UTC days: the period is always UTC days (T1), so in a zone east of UTC (Paris) the
last instant of 31 December is already the next year's first hour: one bucket more. The CSV answer (V1) is read into pandas; empty cells (null) become NaN. Prints the table as
JSON records, with a trend arrow so that the sign is not told by colour alone.

Usage: SALES_METRICS_URL=... SALES_METRICS_KEY=... python3 pandas_compare.py 2025-02-01 2025-12-31
"""
import datetime
import io
import json
import os
import sys

import pandas as pd
import requests


def month_before(day: datetime.date) -> datetime.date:
    """The first day of the previous month."""
    return (day.replace(day=1) - datetime.timedelta(days=1)).replace(day=1)


def main() -> None:
    first = datetime.date.fromisoformat(sys.argv[1])  # the first day of a month
    last = datetime.date.fromisoformat(sys.argv[2])  # the last day of a month
    params = {
        "metrics": "orders,net_revenue",
        "dimensions": "date",
        "granularity": "month",
        "from": first.isoformat(),
        "to": last.isoformat(),
        "compare": "custom",
        "compare_from": month_before(first).isoformat(),
        "compare_to": (last.replace(day=1) - datetime.timedelta(days=1)).isoformat(),
        "format": "csv",
    }
    response = requests.get(
        f"{os.environ['SALES_METRICS_URL']}/api/reports/tabular",
        params=params,
        headers={"Authorization": f"Bearer {os.environ['SALES_METRICS_KEY']}"},
        timeout=60,
    )
    if response.status_code != 200:
        sys.exit(f"{response.status_code}: {response.json()['code']}")
    table = pd.read_csv(io.StringIO(response.text), dtype={"date": str, "date_previous": str})
    table["trend"] = table["net_revenue_change"].map(
        lambda change: "" if pd.isna(change) else ("▲" if change > 0 else "▼" if change < 0 else "=")
    )
    print(table.to_json(orient="records", force_ascii=False))


if __name__ == "__main__":
    main()
