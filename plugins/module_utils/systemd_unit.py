# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Values written into a systemd unit file and into an EnvironmentFile=, by systemd's own rules.

A POSIX shell's quoting (``shlex.quote``) is the wrong language for both files: systemd expands ``%``
specifiers in most unit settings, ``$VAR`` in command lines, and reads an environment file line by line,
so a newline in a key starts a new assignment (``LD_PRELOAD=...``). The rules here are systemd 252's (Debian 12;
the same in the later versions on the supported hosts):

- unit settings (systemd.unit(5) "Specifiers", systemd.syntax(7)): ``%`` is a specifier, ``%%`` a literal
  ``%``; a line ending in ``\\`` is continued on the next one; the parser strips leading and trailing
  whitespace of a value.
- command lines (systemd.service(5) "Command lines", src/core/load-fragment.c ``config_parse_exec``): words
  are unquoted and C-unescaped (``extract_first_word`` with ``EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE``), then
  specifiers are resolved in each word, then at start ``$VAR``/``${VAR}`` are replaced and ``$$`` becomes
  ``$``. A word is written bare when it holds only characters none of these steps change, otherwise in double
  quotes with ``\\`` and ``"`` escaped, ``%`` doubled and ``$`` doubled. A bare ``;`` would separate two
  commands: it is quoted (the separator test looks at the raw text). The executable is checked as systemd
  checks it (absolute, no quote or backslash: ``string_is_safe``) because systemd reads its ``-@:+!``
  prefixes after unquoting, so quoting does not protect it.
- space-separated path lists (``ReadWritePaths=``): the same quoting without ``$`` (no variable expansion there).
- environment files (systemd.exec(5) "EnvironmentFile=", src/basic/env-file.c): no specifiers and no variable
  expansion. The key must be an environment variable name (systemd drops other keys, and a key that holds a
  newline is two lines). A value is written bare when it holds only plain characters, otherwise in double quotes
  where ``\\`` followed by one of ``"\\`$`` stands for that character (any other backslash is kept): exactly
  a POSIX shell's double quotes, so the file also reads the same with ``. file``.

Control characters (NUL, newline, carriage return, tab, ...) are refused everywhere: a unit line cannot carry
them, a newline or carriage return in an environment file ends the assignment, and a NUL ends the file. Each
refusal is a ``SystemdValueError`` that names where the value came from (the caller's ``source``) and the word
position or the variable name, never an environment value: it may be a secret.
"""

from __future__ import annotations

import json
import re
import unicodedata

# Characters that systemd passes through unchanged in a bare command-line word, a bare path-list word
# and a bare environment-file value (none is a quote, a backslash, whitespace, "%", "$", ";" or "#").
_PLAIN = re.compile(r'[A-Za-z0-9_@+=:,./-]+\Z')
# systemd's env_name_is_valid(): letters, digits, "_", not starting with a digit.
_ENV_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')
# Inside double quotes in an environment file these four are taken literally after a backslash.
_ENV_ESCAPE = re.compile(r'([\\"`$])')


class SystemdValueError(ValueError):
    """A value that cannot be written into a unit or environment file as it is."""


def _bad_character(value):
    """The first character systemd cannot take in a unit or environment file line, or None."""
    for char in value:
        category = unicodedata.category(char)
        # Cc: C0 controls (NUL, tab, newline, carriage return, ...), DEL and the C1 controls; Cs: lone
        # surrogates, which have no UTF-8 form (systemd refuses a file that is not valid UTF-8).
        if category in ('Cc', 'Cs') or char == '\ufeff':
            return char
    return None


def _describe(char):
    names = {'\x00': 'a NUL byte', '\n': 'a newline', '\r': 'a carriage return', '\t': 'a tab'}
    return names.get(char, 'the control character U+%04X' % ord(char))


def _check_text(value, source, what):
    if not isinstance(value, str):
        raise SystemdValueError('%s: %s is a %s, not a string' % (source, what, type(value).__name__))
    char = _bad_character(value)
    if char is not None:
        raise SystemdValueError('%s: %s holds %s, which systemd cannot take in a unit or environment file '
                                '(it would end the line or the file)' % (source, what, _describe(char)))


def _word_hint(argv, index):
    """How a refusal names a command-line word without printing it: its position and the option it belongs to."""
    if index == 0:
        return 'the executable'
    previous = argv[index - 1] if index > 0 else ''
    if isinstance(previous, str) and previous.startswith('-') and _bad_character(previous) is None:
        return 'word %d (after %s)' % (index, previous)
    return 'word %d' % index


def unit_value(value, source):
    """A one-line setting (Description=, WorkingDirectory=, EnvironmentFile=, DeviceAllow=) with specifiers escaped.

    These settings are not unquoted: only "%" changes meaning. Leading or trailing whitespace would be stripped
    by systemd and a trailing backslash would join the next line, so both are refused.
    """
    _check_text(value, source, 'the value')
    if value != value.strip(' '):
        raise SystemdValueError('%s: the value starts or ends with a space, which systemd strips' % source)
    if value.endswith('\\'):
        raise SystemdValueError('%s: the value ends with a backslash, which joins the next line of the unit' % source)
    return value.replace('%', '%%')


def _quote_word(value, expand_dollar):
    if _PLAIN.match(value):
        return value
    quoted = value.replace('\\', '\\\\').replace('"', '\\"').replace('%', '%%')
    if expand_dollar:
        quoted = quoted.replace('$', '$$')
    return '"%s"' % quoted


def exec_word(value, source='ExecStart', what='the word'):
    """One argument of a command line (ExecStart=), quoted so that the program receives exactly ``value``."""
    _check_text(value, source, what)
    return _quote_word(value, expand_dollar=True)


def exec_line(argv, source='ExecStart', executable=True):
    """A whole command line: the executable, then each argument as one word.

    With ``executable`` false, ``argv`` is a list of arguments only (to check a part of a command line).
    """
    if not isinstance(argv, (list, tuple)) or (executable and not argv):
        raise SystemdValueError('%s: the command line must be a non-empty list of words' % source)
    words = []
    for index, value in enumerate(argv):
        position = index if executable else index + 1
        what = _word_hint(argv, index) if executable else 'item %d' % position
        if executable and index == 0:
            _check_text(value, source, what)
            # systemd reads the -@:+! prefixes after unquoting and refuses quotes and backslashes in the path
            # (string_is_safe); it does not expand $VAR in it.
            if not value.startswith('/') or value.endswith('/') or re.search(r'["\'\\$]', value):
                raise SystemdValueError('%s: the executable must be an absolute file path without quotes, backslashes '
                                        'or "$"' % source)
            words.append(value.replace('%', '%%'))
        else:
            words.append(exec_word(value, source, what))
    return ' '.join(words)


def path_list(paths, source):
    """A space-separated list of absolute paths (ReadWritePaths=): each quoted as one word, specifiers escaped."""
    if not isinstance(paths, (list, tuple)):
        raise SystemdValueError('%s: expected a list of paths' % source)
    words = []
    for index, value in enumerate(paths):
        what = 'path %d' % (index + 1)
        _check_text(value, source, what)
        # A leading "-" or "+" would be read as a prefix after unquoting; an absolute path has neither.
        if not value.startswith('/'):
            raise SystemdValueError('%s: %s is not an absolute path' % (source, what))
        words.append(_quote_word(value, expand_dollar=False))
    return ' '.join(words)


def env_line(key, value, source):
    """One ``KEY=value`` line of an environment file (EnvironmentFile=)."""
    if not isinstance(key, str) or not _ENV_NAME.match(key):
        # The key is shown as JSON (a newline in it is visible as \\n); a key is a name, not a secret.
        shown = json.dumps(key) if isinstance(key, str) else repr(key)
        raise SystemdValueError('%s: %s is not an environment variable name (letters, digits and "_", not starting '
                                'with a digit); systemd would ignore it or, with a newline, read another variable'
                                % (source, shown))
    if isinstance(value, (bool, int, float)):
        # As the templates' "| string" did before: YAML reads NCCL_P2P_DISABLE: 1 as a number.
        value = str(value)
    if not isinstance(value, str):
        raise SystemdValueError('%s: the value of %s is a %s, not a string' % (source, key, type(value).__name__))
    _check_text(value, source, 'the value of %s' % key)
    if _PLAIN.match(value):
        return '%s=%s' % (key, value)
    return '%s="%s"' % (key, _ENV_ESCAPE.sub(r'\\\1', value))


def env_lines(env, source):
    """The lines of an environment file for a dict, sorted by name (a stable file: no change, no restart)."""
    if not isinstance(env, dict):
        raise SystemdValueError('%s: expected a dict of environment variables' % source)
    for key in env:
        if not isinstance(key, str):
            raise SystemdValueError('%s: %r is not an environment variable name' % (source, key))
    return [env_line(key, env[key], source) for key in sorted(env)]
