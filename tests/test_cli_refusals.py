"""Bad counts, sizes and seeds given on the command line: one line naming the option, exit 2,
before anything slow runs (no traceback, no endless loop, no file written)."""

from __future__ import annotations

import pytest

from agent.cli.main import main


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last stderr line of a command that must exit 2 (argparse exits, ours return)."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2, argv
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "Traceback" not in "\n".join(err)
    return err[-1]


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "resolve", "--seed", "-1"],
        ["bench", "resolve", "--seed", "4294967296"],
        ["eval", "aivat", "--game", "leduc", "--hands", "2", "--seed", "-1"],
    ],
)
def test_a_seed_outside_0_to_max_seed_is_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert "argument --seed:" in _refused(argv, capsys)


def test_arg_types_take_what_is_valid() -> None:
    from agent.cli.common import finite_float, positive_int, seed

    assert seed("0") == 0 and seed(str(2**32 - 1)) == 2**32 - 1
    assert positive_int("1") == 1
    assert finite_float("2.5") == 2.5
