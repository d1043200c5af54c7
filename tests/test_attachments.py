"""`Attachments.format_of`: an image format named from its first bytes only (ex5's plot check
names a PDF or a JPEG written where a PNG belongs, and nothing for other files)."""

import pytest

from grader.authoring import Attachments


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "PNG"),
        (b"%PDF-1.4\n%\xe2\xe3", "PDF"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "JPEG"),
        (b"%!PS-Adobe-3.0 EPSF", "PostScript"),
        (b'<?xml version="1.0"', "SVG"),
        (b"\x93NUMPY\x01\x00", ""),  # np.save
        (b"col1,col2\n", ""),  # a CSV
        (b"", ""),
    ],
)
def test_a_format_is_named_by_its_signature_alone(data, name):
    assert Attachments.format_of(data) == name
