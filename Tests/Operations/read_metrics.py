"""Reads a /metrics exposition (a file, or stdin) with PyPI's prometheus-client
text parser -- the parser Prometheus's own Python client ships -- and prints
every sample as one JSON object per line: name, labels, value, and the family's
type. The Swift test (OperationsTests) asserts on these values, so a sample
the parser cannot read, or reads differently from what the server meant,
fails there. Exits 1 with the parser's error on a malformed exposition."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main() -> int:
    text = open(sys.argv[1], encoding="utf-8").read() if len(sys.argv) > 1 else sys.stdin.read()
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                print(json.dumps({
                    "family": family.name,
                    "type": family.type,
                    "name": sample.name,
                    "labels": dict(sample.labels),
                    "value": sample.value,
                }, sort_keys=True))
    except Exception as error:  # the parser's ValueError, or anything it raises
        print(f"read_metrics: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
