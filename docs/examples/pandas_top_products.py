"""The top ten products by net sales over a period, in one request (SPEC L7), with their share.

`sort=-product_net_sales&limit=10` makes the API sort and cut: the answer is the ten rows, no
more. The CSV answer (V1) is read into pandas with the product names as text (a name like
`=Promo` arrives with a leading `'`, which is removed here: spreadsheets need it, pandas does
not); each product's share of the period's product net sales (one more request, without
dimension) is added. Prints the table as JSON records.

Usage: SALES_METRICS_URL=... SALES_METRICS_KEY=... python3 pandas_top_products.py 2026-01-01 2026-03-31
"""
import io
import json
import os
import sys

import pandas as pd
import requests


def get(params: dict) -> str:
    response = requests.get(
        f"{os.environ['SALES_METRICS_URL']}/api/reports/tabular",
        params={**params, "format": "csv"},
        headers={"Authorization": f"Bearer {os.environ['SALES_METRICS_KEY']}"},
        timeout=60,
    )
    if response.status_code != 200:
        sys.exit(f"{response.status_code}: {response.json()['code']}")
    return response.text


def main() -> None:
    period = {"from": sys.argv[1], "to": sys.argv[2]}
    top = pd.read_csv(
        io.StringIO(
            get(
                {
                    **period,
                    "metrics": "product_net_sales,units_sold,orders",
                    "dimensions": "product",
                    "sort": "-product_net_sales",
                    "limit": "10",
                }
            )
        ),
        dtype={"product": str},
        keep_default_na=False,
    )
    top["product"] = top["product"].map(lambda name: name[1:] if name[:1] == "'" and name[1:2] in "=+-@\t\r" else name)
    total = pd.read_csv(io.StringIO(get({**period, "metrics": "product_net_sales"})))
    all_net = total["product_net_sales"].iloc[0]
    top["share"] = (top["product_net_sales"] / all_net * 100).round(1) if all_net else 0.0
    print(top.to_json(orient="records", force_ascii=False))


if __name__ == "__main__":
    main()
