"""The notebooks in notebooks/ run: every cell of each is executed by a
Jupyter kernel of this Python (ipykernel, through nbclient), in a temporary
directory, and a cell that raises fails the test. The committed notebooks
carry no outputs (the execution happens in memory; nothing is written back).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_the_two_notebooks_are_there():
    assert [p.name for p in NOTEBOOKS] == ["scenario.ipynb", "sweep.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_is_clean(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name} cell {i} has committed outputs: clear them (Jupyter: Clear All Outputs)"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path):
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",  # ipykernel's spec; jupyter_client starts it with sys.executable (the venv's)
        resources={"metadata": {"path": str(tmp_path)}},
        extra_arguments=["--HistoryManager.enabled=False"],
    )
    try:
        client.execute()  # starts the kernel and always shuts it down, also on an error
    except CellExecutionError as e:
        pytest.fail(f"{path.name}: a cell failed:\n{e}")
    images = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if "image/png" in out.get("data", {})
    ]
    assert images, f"{path.name} drew no figure"
