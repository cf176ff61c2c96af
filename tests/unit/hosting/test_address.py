"""The class link's address: the host's public URL, else the presenter's browser's unless loopback."""
import pytest

from specviz.hosting.address import loopback, public_url, student_address
from specviz.hosting.config import parse_config


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "lab.localhost", "127.0.0.1", "127.8.9.10", "::1", "[::1]",
                                  "0.0.0.0", "::"])
def test_hosts_that_reach_only_the_presenters_own_computer(host):
    assert loopback(host)


@pytest.mark.parametrize("host", ["10.0.0.5", "192.168.1.20", "fe80::1", "lab-pc", "specviz.example.edu"])
def test_hosts_a_student_may_reach(host):
    assert not loopback(host)


def test_the_hosts_public_url_wins_over_the_presenters_address():
    assert student_address("https://specviz.example.edu/", "http://10.0.0.5:8501") == "https://specviz.example.edu"
    assert student_address("https://specviz.example.edu", None) == "https://specviz.example.edu"


def test_without_one_the_presenters_address_is_used_unless_it_is_loopback():
    assert student_address("", "http://10.0.0.5:8501") == "http://10.0.0.5:8501"
    assert student_address("", "https://lab.example.edu/specviz/") == "https://lab.example.edu/specviz"
    assert student_address("", "http://127.0.0.1:8501") is None
    assert student_address("", "http://localhost:8501/") is None
    assert student_address("", None) is None and student_address("", "") is None


def test_the_page_a_browser_is_on_is_not_part_of_the_apps_address():
    pages = ["draft_and_verify", "dloop"]
    assert student_address("", "http://10.0.0.5:8501/dloop", pages) == "http://10.0.0.5:8501"
    assert student_address("", "http://10.0.0.5:8501/specviz/draft_and_verify/", pages) == "http://10.0.0.5:8501/specviz"
    assert student_address("", "http://10.0.0.5:8501/specviz", pages) == "http://10.0.0.5:8501/specviz"


@pytest.mark.parametrize("bad", ["specviz.example.edu", "ftp://x.org", "https://x.org/?a=1", "https://", 3])
def test_the_config_refuses_a_public_url_students_could_not_open(bad):
    with pytest.raises(ValueError, match="classes.public_url must be an http"):
        parse_config({"classes": {"public_url": bad}})


def test_the_config_reads_the_public_url():
    assert parse_config({"classes": {"public_url": "https://specviz.example.edu"}}).classes.public_url == \
        "https://specviz.example.edu"
    assert parse_config({}).classes.public_url == "" and public_url("") == ""
