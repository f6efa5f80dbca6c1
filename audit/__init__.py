"""The fair-play audit: does a seat's play favour hidden cards more than its information explains?

``canasta audit LOG...`` (audit/cli.py). The method and its measured error rates: docs/audit.md.
Layer: above bots and replay (it replays logs and samples worlds as the bots do), below cli.
"""
