"""Socket lists that UNCORE_SOCKETS and `uncore stat --sockets` must both
accept (with the sockets they select) or both refuse: one parser
(sdk/common/id_list.h) reads them.  Used by tests/tools/stat_doctor_test.py
and tests/runtime/env_session_test.py."""

# (text, sockets); None: every socket, as when the list is not given.
ACCEPTED = [
    ("0", [0]),
    ("1", [1]),
    ("0-1", [0, 1]),
    ("1,0", [0, 1]),
    (" 0 , 1 ", [0, 1]),
    ("0-1,1", [0, 1]),
    ("0\n", [0]),
    ("", None),
]

# (text, a piece of the message)
REFUSED = [
    ("0,,1", "piece 2 of 3 is empty"),
    ("0,", "piece 2 of 2 is empty"),
    ("1-0", "write 0-1"),
    ("-1", "negative"),
    ("zero", "not a number"),
    ("0x1", "not a number"),
    ("1024", "largest id, 1023"),
    ("0-1024", "largest id, 1023"),
]
