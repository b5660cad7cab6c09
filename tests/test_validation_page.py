"""docs/validation.md is made from docs/validation/template.md and the stored data
(`scripts/validation.py --report-only`): an edit made to the page alone is undone by the next
report, as the kernel paragraph's was (the template kept the text of two rounds before)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_validation_page_is_what_its_template_and_the_stored_data_make():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "validation.py"), "--check"], capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
