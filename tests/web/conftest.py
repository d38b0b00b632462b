"""The browser and Prometheus tests of memscope live share the integration
tests' fixtures and helpers (the built memscope, touchmem, fixture trees):
that conftest is loaded under another name and everything it has is
offered here, where the helpers' `from conftest import ...` finds it."""
import importlib.util
import pathlib
import sys

INTEGRATION = pathlib.Path(__file__).resolve().parents[1] / "integration"
sys.path.insert(0, str(INTEGRATION))
_spec = importlib.util.spec_from_file_location("integration_conftest", INTEGRATION / "conftest.py")
_shared = importlib.util.module_from_spec(_spec)
sys.modules["integration_conftest"] = _shared
_spec.loader.exec_module(_shared)
globals().update({k: v for k, v in vars(_shared).items() if not k.startswith("__")})
