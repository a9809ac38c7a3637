"""The suite runs against `shale` by default; SHALE_PY_MODULE=plyvel runs
it against plyvel itself, to check that it describes plyvel's behaviour
(tests of what Shale does differently are marked `shale_only`)."""

import importlib
import os

import pytest

MODULE_NAME = os.environ.get("SHALE_PY_MODULE", "shale")


def pytest_configure(config):
    config.addinivalue_line("markers", "shale_only: behaviour where Shale differs from plyvel")


def pytest_collection_modifyitems(config, items):
    if MODULE_NAME == "shale":
        return
    skip = pytest.mark.skip(reason="Shale's own behaviour")
    for item in items:
        if "shale_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def plyvel():
    return importlib.import_module(MODULE_NAME)


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "db")


@pytest.fixture
def db(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    yield db
    db.close()


def fill(db, keys):
    for k in keys:
        db.put(k, k.upper() if k.isalpha() else b"v" + k)
