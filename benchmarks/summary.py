"""SUMMARY.md: every target of issue 7, the measured ratio, held or missed (filled in below)."""
def main(args):
    pass
