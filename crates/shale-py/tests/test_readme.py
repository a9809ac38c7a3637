"""The Python example of the repository's README runs as written."""

import os
import re


README = os.path.join(os.path.dirname(__file__), "..", "..", "..", "README.md")


def readme_example():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n## Python\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example(plyvel, tmp_path, monkeypatch):
    code = readme_example()
    assert "import shale as plyvel" in code
    monkeypatch.chdir(tmp_path)
    # Runs against the module under test (plyvel too, with SHALE_PY_MODULE).
    code = code.replace("import shale as plyvel", "")
    exec(compile(code, "README.md", "exec"), {"plyvel": plyvel})
    assert not os.path.exists(tmp_path / "example-db" / "CURRENT")
