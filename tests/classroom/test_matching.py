"""Tying student folders to Canvas students: a roster row each, or a naming convention."""

from __future__ import annotations

import pytest

from grader.classroom import matching

# Canvas's gradebook export of a class whose login IDs are numbers, as some SIS give them:
# Bo's login `1201` is also Ann's Canvas ID.
ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (77)\n"
    "    Points Possible,,,,,10\n"
    '"Ng, Ann",1201,S-1,ann,A,9\n'
    '"Bo, Bo",1202,S-2,1201,A,\n'
    '"Li, Cy",1203,S-3,cy,B,\n'
)


def people() -> list[dict[str, str]]:
    return matching.read_roster(ROSTER)


def test_each_folder_gets_its_own_row_and_the_unknown_are_named() -> None:
    found, missing = matching.from_roster(["ann", "cy", "zed"], people())
    assert found["ann"]["ID"] == "1201" and found["cy"]["SIS User ID"] == "S-3"
    assert missing == ["zed"]
    by_id, _ = matching.from_roster(["1203", "S-1"], people())  # other columns, other styles
    assert by_id["1203"]["Student"] == "Li, Cy" and by_id["S-1"]["Student"] == "Ng, Ann"


def test_a_folder_that_is_one_students_login_and_anothers_id_is_refused() -> None:
    """Compared with every column, Bo's folder `1201` is also Ann's ID: first-row-wins gave
    Ann two rows (her own, then Bo's grades) and Bo none."""
    with pytest.raises(matching.Ambiguous) as refused:
        matching.from_roster(["ann", "1201"], people())
    message = str(refused.value)
    assert "'1201' matches 2 students" in message
    assert "Ng, Ann by ID" in message and "Bo, Bo by SIS Login ID" in message
    assert "--match-by sis-login" in message  # what to do


def test_two_folders_that_are_one_student_are_refused() -> None:
    with pytest.raises(matching.Ambiguous, match="'ann' and 'S-1' both match Ng, Ann"):
        matching.from_roster(["ann", "S-1"], people())


def test_match_by_compares_one_column_and_so_resolves_it() -> None:
    found, missing = matching.from_roster(["ann", "1201"], people(), by="sis-login")
    assert found["ann"]["Student"] == "Ng, Ann" and found["1201"]["Student"] == "Bo, Bo"
    assert missing == []
    found, missing = matching.from_roster(["S-2", "ann"], people(), by="sis-user")
    assert found["S-2"]["Student"] == "Bo, Bo" and missing == ["ann"]


def test_a_naming_convention_puts_the_name_in_its_column_only() -> None:
    assert matching.by_name(["S-1"], "sis-user") == {
        "S-1": {"Student": "", "ID": "", "SIS User ID": "S-1", "SIS Login ID": "", "Section": ""}
    }
    with pytest.raises(ValueError, match="needs a roster"):  # Canvas finds no one by it alone
        matching.by_name(["ann"], "sis-login")


@pytest.mark.parametrize(
    "text",
    ["", "name,score\nann,3\n", "Student,ID,SIS User ID,Section\nann,1,S,A\n"],
)
def test_a_roster_that_is_not_canvas_export_is_refused_with_where_to_get_one(text: str) -> None:
    with pytest.raises(matching.RosterError, match="Export Entire Gradebook"):
        matching.read_roster(text)
