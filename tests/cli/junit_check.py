# SPDX-License-Identifier: MIT
"""JUnit XML as the CI reporters read it, checked with a real XML parser.

The shape is that of the JUnit schema Jenkins' JUnit plugin and the
test reporters of GitLab and GitHub Actions accept (the Surefire/Ant
"junit-10" schema): a <testsuites> root (name, tests, failures, errors,
time) of <testsuite>s (name, tests, failures and errors required; time,
skipped, timestamp, hostname...) holding <properties> of <property name
value>, <testcase>s (name required; classname, time), <system-out> and
<system-err>; a <testcase> holds <skipped>, <error>, <failure> (message,
type; text) and <system-out>/<system-err>.  Counts must be what the
elements say.

    parse(path) -> (root, problems)     problems: a list of strings
    cases(root) -> [(suite, classname, name, failure or None, skipped)]
"""
import re
import xml.etree.ElementTree as ET

SUITES_ATTRS = {"name", "time", "tests", "failures", "errors"}
SUITE_ATTRS = {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp",
               "hostname", "id", "package", "file", "log", "url", "version"}
SUITE_REQUIRED = {"name", "tests", "failures", "errors"}
SUITE_CHILDREN = {"testsuite", "properties", "testcase", "system-out", "system-err"}
CASE_ATTRS = {"name", "time", "classname", "group"}
CASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err"}
RESULT_ATTRS = {"type", "message"}
TIME = re.compile(r"^[0-9]*(\.[0-9]{0,3})?$")
STAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")


def _attrs(el, allowed, required, where, problems):
    extra = set(el.attrib) - allowed
    if extra:
        problems.append("%s: attributes not in the schema: %s" % (where, sorted(extra)))
    missing = required - set(el.attrib)
    if missing:
        problems.append("%s: required attributes missing: %s" % (where, sorted(missing)))


def _count(el, name, want, where, problems):
    if name in el.attrib and el.attrib[name] != str(want):
        problems.append("%s: %s=%r, but it holds %d" % (where, name, el.attrib[name], want))


def _suite(s, problems, where):
    _attrs(s, SUITE_ATTRS, SUITE_REQUIRED, where, problems)
    if "time" in s.attrib and not TIME.match(s.attrib["time"]):
        problems.append("%s: time %r" % (where, s.attrib["time"]))
    if "timestamp" in s.attrib and not STAMP.match(s.attrib["timestamp"]):
        problems.append("%s: timestamp %r is not ISO 8601 without a zone" % (where,
                                                                           s.attrib["timestamp"]))
    tests = failures = skipped = errors = 0
    for c in s:
        if c.tag not in SUITE_CHILDREN:
            problems.append("%s: <%s> is not a child of <testsuite>" % (where, c.tag))
        if c.tag == "properties":
            for p in c:
                if p.tag != "property":
                    problems.append("%s: <%s> in <properties>" % (where, p.tag))
                _attrs(p, {"name", "value"}, {"name", "value"}, where + "/property", problems)
        if c.tag != "testcase":
            continue
        cw = "%s/testcase[%s]" % (where, c.get("name"))
        tests += 1
        _attrs(c, CASE_ATTRS, {"name"}, cw, problems)
        for r in c:
            if r.tag not in CASE_CHILDREN:
                problems.append("%s: <%s> is not a child of <testcase>" % (cw, r.tag))
            if r.tag in ("failure", "error", "skipped"):
                _attrs(r, RESULT_ATTRS, set(), cw + "/" + r.tag, problems)
        failures += any(r.tag == "failure" for r in c)
        errors += any(r.tag == "error" for r in c)
        skipped += any(r.tag == "skipped" for r in c)
    _count(s, "tests", tests, where, problems)
    _count(s, "failures", failures, where, problems)
    _count(s, "errors", errors, where, problems)
    _count(s, "skipped", skipped, where, problems)
    return tests, failures, errors


def parse(path):
    """The document's root and what breaks the schema's shape in it."""
    problems = []
    root = ET.parse(path).getroot()
    if root.tag == "testsuite":
        _suite(root, problems, "testsuite")
        return root, problems
    if root.tag != "testsuites":
        return root, ["the root is <%s>, not <testsuites> or <testsuite>" % root.tag]
    _attrs(root, SUITES_ATTRS, set(), "testsuites", problems)
    tests = failures = errors = 0
    for i, s in enumerate(root):
        if s.tag != "testsuite":
            problems.append("<%s> in <testsuites>" % s.tag)
            continue
        t, f, e = _suite(s, problems, "testsuite[%d]" % i)
        tests, failures, errors = tests + t, failures + f, errors + e
    _count(root, "tests", tests, "testsuites", problems)
    _count(root, "failures", failures, "testsuites", problems)
    _count(root, "errors", errors, "testsuites", problems)
    return root, problems


def cases(root):
    """(suite name, classname, name, the <failure> element or None, skipped) of every case."""
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    out = []
    for s in suites:
        for c in s.findall("testcase"):
            out.append((s.get("name"), c.get("classname"), c.get("name"), c.find("failure"),
                        c.find("skipped") is not None))
    return out
