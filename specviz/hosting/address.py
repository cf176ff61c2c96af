"""The address students open for a class: the host's public URL, else the one the presenter's
browser used, unless that one only reaches the presenter's own computer.

A presenter who opened http://127.0.0.1:8501 would otherwise project a link and QR code no student
can open. `student_address` decides from two texts (the config's classes.public_url and the
browser's address), so it is a pure function the tests plant addresses in.

What it leaves out: building the link's query (appkit.links), drawing it (appkit.classroom).
"""
import ipaddress
import urllib.parse


def loopback(host: str) -> bool:
    """Does `host` name only the computer it is typed on (or no computer at all)?

    >>> [loopback(h) for h in ("localhost", "app.localhost", "127.0.0.1", "::1", "0.0.0.0", "10.0.0.5", "lab.example.edu")]
    [True, True, True, True, True, False, False]
    """
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def student_address(public_url: str, browser_url: str | None, pages=()) -> str | None:
    """The app's address for students, without a trailing slash; None when neither address will do.
    A browser's address ends with its page's url path (one of `pages`), which is not the app's.

    >>> student_address("https://specviz.example.edu/", "http://127.0.0.1:8501")
    'https://specviz.example.edu'
    >>> student_address("", "http://10.0.0.5:8501/course/dloop", pages=["dloop", "cost"])
    'http://10.0.0.5:8501/course'
    >>> student_address("", "http://localhost:8501") is None, student_address("", None) is None
    (True, True)
    """
    if public_url:
        return public_url.rstrip("/")
    if not browser_url:
        return None
    parts = urllib.parse.urlsplit(browser_url)
    if not parts.hostname or loopback(parts.hostname):
        return None
    path = parts.path.rstrip("/")
    head, _, last = path.rpartition("/")
    return f"{parts.scheme}://{parts.netloc}{head if last in pages else path}"


def public_url(value) -> str:
    """The config's classes.public_url checked: empty, or an http(s) address with a host and no query.

    >>> public_url("https://specviz.example.edu/"), public_url("")
    ('https://specviz.example.edu/', '')
    >>> public_url("specviz.example.edu")
    Traceback (most recent call last):
    ValueError: classes.public_url must be an http:// or https:// address with a host and no query, got 'specviz.example.edu'
    """
    parts = urllib.parse.urlsplit(value) if isinstance(value, str) else None
    if value == "" or (parts and parts.scheme in ("http", "https") and parts.hostname and not parts.query
                       and not parts.fragment):
        return value
    raise ValueError("classes.public_url must be an http:// or https:// address with a host and no query, "
                     f"got {value!r}")
