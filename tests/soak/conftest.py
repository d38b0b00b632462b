"""The soak stage shares the integration tests' fixtures (the built binary, the workloads)."""
import importlib.util
import pathlib
import sys

# The integration conftest imports its helpers (recordings_add_up) from its own folder.
INTEGRATION = pathlib.Path(__file__).resolve().parents[1] / "integration"
sys.path.insert(0, str(INTEGRATION))
_spec = importlib.util.spec_from_file_location("integration_conftest", INTEGRATION / "conftest.py")
_integration = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_integration)

build_dir = _integration.build_dir
memscope = _integration.memscope
