# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parsers for the output of ``nvidia-smi``: pure functions, no I/O, no GPU needed.

Three sources are understood, all tested against real recorded outputs
(tests/unit/fixtures/real/ and tests/unit/fixtures/public/nvidia-smi/):

* the CSV of ``--query-gpu=<fields> --format=csv[,noheader][,nounits]``: names are never truncated
  there and ``compute_cap`` is only available there, so it is the primary source;
* the human table printed without arguments: the only place that carries the highest CUDA version
  the driver supports (``--query-gpu=cuda_version`` is "not a valid field to query" on the 580
  drivers). Header layouts of several driver generations are accepted (``Driver Version``/``CUDA
  Version`` up to R580, ``KMD Version``/``CUDA UMD Version`` from R610, no CUDA field before R410,
  ``CUDA Version: N/A`` when libcuda is missing). Names in the table are cut to about 20 characters
  and end in ``...``; they are flagged as truncated;
* the XML of ``-q -x``: driver, CUDA version, product name, bus id, memory, UUID. It carries no
  compute capability (checked against the real 580.159.04 output, DTD nvsmi_device_v13).

Errors (missing binary, no driver, driver/library mismatch, no devices, bad arguments) are turned
into ``{'kind': ..., 'message': ...}`` by :func:`classify_error`; nothing here raises on odd input.

The text comes from a command run as root on the host, so every parser is linear in its input: no
regular expression here can backtrack over a long line (each was timed on 100,000-character lines of
its worst shape, tests/unit/plugins/module_utils/test_nvidia_smi.py), numbers are bounded in length
before ``int()``, and an output over :data:`MAX_OUTPUT_CHARS` is refused (reported in ``problems``),
not parsed. Bytes, and text holding the lone surrogates that ``surrogateescape`` decoding leaves for
bytes that are not UTF-8, are read with U+FFFD in their place.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

# --query-gpu field name -> key used in the results. Aliases accepted by nvidia-smi map to the same key.
QUERY_FIELD_KEYS = {
    'index': 'index',
    'name': 'name',
    'gpu_name': 'name',
    'compute_cap': 'compute_cap',
    'driver_version': 'driver_version',
    'memory.total': 'memory_total_mib',
    'memory.used': 'memory_used_mib',
    'memory.free': 'memory_free_mib',
    'pci.bus_id': 'bus_id',
    'gpu_bus_id': 'bus_id',
    'uuid': 'uuid',
    'gpu_uuid': 'uuid',
    'count': 'count',
    'serial': 'serial',
    'vbios_version': 'vbios_version',
    'persistence_mode': 'persistence_mode',
}

# The query used by gpu_info (the one recorded in fixtures/real/.../host.txt).
DEFAULT_QUERY_FIELDS = ('index', 'name', 'compute_cap', 'driver_version', 'memory.total', 'pci.bus_id')

# Values nvidia-smi prints instead of data (with or without brackets, depending on the output).
UNAVAILABLE_VALUES = frozenset([
    'N/A', '[N/A]',
    'Not Supported', '[Not Supported]',
    'Unknown Error', '[Unknown Error]',
    'Insufficient Permissions', '[Insufficient Permissions]',
    'GPU is lost', '[GPU is lost]',
    'Requested functionality has been deprecated', '[Requested functionality has been deprecated]',
    'ERR!', '[ERR!]',
])

# The most output a parser here reads (characters). 8 GPUs give about 5 KB of table and 60 KB of -q -x XML; beyond
# this the output is refused, not parsed (see the problems of each parser).
MAX_OUTPUT_CHARS = 4 * 1024 * 1024
# The longest version string version_tuple reads (real ones are under 20 characters).
MAX_VERSION_CHARS = 200

_INT_KEYS = frozenset(['index', 'count'])
_MIB_KEYS = frozenset(['memory_total_mib', 'memory_used_mib', 'memory_free_mib'])
_HEADER_CELL = re.compile(r'^[a-z][a-z0-9_.]*$')
# At most 15 digits each side of the point: a longer number is no memory size (and float() of it overflows later).
_MEMORY_VALUE = re.compile(r'^(?P<value>\d{1,15}(?:\.\d{1,15})?)\s*(?P<unit>[KMGT]iB|[KMGT]B|B)?$', re.IGNORECASE)
_UNIT_FACTOR_MIB = {'b': 1.0 / (1024 * 1024), 'kib': 1.0 / 1024, 'kb': 1.0 / 1024, 'mib': 1.0, 'mb': 1.0, 'gib': 1024.0,
                    'gb': 1024.0, 'tib': 1024.0 * 1024, 'tb': 1024.0 * 1024}

# Human table.
_BUS_ID = re.compile(r'(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])')
_SMI_VERSION = re.compile(r'NVIDIA-SMI\s+(?P<v>[0-9][0-9A-Za-z.\-]*)')
_DRIVER_VERSION = re.compile(r'(?:Driver|KMD)\s+Version:\s*(?P<v>[^\s|]+)')
_CUDA_VERSION = re.compile(r'CUDA(?:\s+UMD)?\s+Version:\s*(?P<v>[^\s|]+)')
_PERSISTENCE = ('On', 'Off', 'WDDM', 'TCC', 'MCDM', 'N/A')
# (?<!\d) lets a run of digits be tried from its first digit only, and {1,12} bounds the backtracking.
_MEMORY_USAGE = re.compile(r'(?<!\d)(?P<used>\d{1,12})\s*MiB\s*/\s*(?P<total>\d{1,12})\s*MiB')
_SURROGATES = re.compile('[\ud800-\udfff]')
_LEADING_DIGITS = re.compile(r'[0-9]+')
_TRUNCATION_MARK = '...'


class _PrefixThen(object):
    """``prefix.*suffix`` (``.`` not matching a newline) without the regex: the greedy ``.*`` rescans the rest of
    the line from every prefix found, quadratic on a line that repeats the prefix. Only the first prefix of a line
    needs to be tried: it leaves the longest rest. ``search`` answers like a pattern's (a match-like object or None)."""

    def __init__(self, prefix, suffix, flags=0):
        self.prefix = re.compile(prefix, flags)
        self.suffix = re.compile(suffix, flags)
        self.pattern = '(%s).*%s' % (prefix, suffix)

    def search(self, text):
        for line in (text or '').split('\n'):
            first = self.prefix.search(line)
            if first:
                found = self.suffix.search(line, first.end())
                if found:
                    return found
        return None


class _AnyOf(object):
    """The first of several patterns that finds something (an alternation whose branches are searched one by one)."""

    def __init__(self, *patterns):
        self.patterns = patterns

    def search(self, text):
        for pattern in self.patterns:
            found = pattern.search(text)
            if found:
                return found
        return None


# Error texts of nvidia-smi (stdout or stderr) -> kind. First match wins; order matters.
ERROR_PATTERNS = (
    ('driver_mismatch', re.compile(r'Driver/library version mismatch', re.IGNORECASE)),
    ('no_driver', re.compile(r"NVIDIA-SMI has failed because it couldn.t communicate with the NVIDIA driver", re.IGNORECASE)),
    ('no_driver', re.compile(r'Failed to initialize NVML: Driver Not Loaded', re.IGNORECASE)),
    ('no_devices', re.compile(r'No devices were found', re.IGNORECASE)),
    ('no_devices', re.compile(r'No supported GPUs were found', re.IGNORECASE)),
    ('no_permission', re.compile(r'Insufficient Permissions|Failed to initialize NVML: Insufficient', re.IGNORECASE)),
    ('library_not_found', _AnyOf(_PrefixThen(r"couldn.t find|could not load|unable to load", r'libnvidia-ml', re.IGNORECASE),
                                 re.compile(r'NVML Shared Library Not Found', re.IGNORECASE))),
    ('invalid_argument', re.compile(r'is not a valid field to query|is not recognized\.|is not valid for this command|'
                                    r'Invalid combination of input arguments|switch is missing|is missing its value|Missing value for',
                                    re.IGNORECASE)),
    ('nvml_error', re.compile(r'Failed to initialize NVML', re.IGNORECASE)),
    ('gpu_lost', re.compile(r'GPU is lost|fallen off the bus', re.IGNORECASE)),
)

# Documented nvidia-smi return codes (https://docs.nvidia.com/deploy/nvidia-smi/index.html, RETURN VALUE)
# used when the text alone says nothing. 18 is NVML_ERROR_LIB_RM_VERSION_MISMATCH, observed as the exit
# status of "Driver/library version mismatch" (anderskm/gputil issue #55, mozilla/translations issue #1167).
RETURN_CODE_KINDS = {
    2: 'invalid_argument',
    3: 'not_supported',
    4: 'no_permission',
    6: 'no_devices',
    8: 'insufficient_power',
    9: 'no_driver',
    10: 'irq_issue',
    12: 'library_not_found',
    13: 'function_not_found',
    14: 'corrupted_inforom',
    15: 'gpu_lost',
    18: 'driver_mismatch',
    127: 'not_found',
    255: 'unknown',
}


def as_text(value):
    """Command output as str: bytes decoded as UTF-8 with U+FFFD for what is not UTF-8, and the lone surrogates of
    surrogateescape-decoded text (what AnsibleModule.run_command gives for such bytes) replaced by U+FFFD too, so
    that nothing downstream (the XML parser, JSON, the controller's display) fails on them."""
    if value is None:
        return ''
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    return _SURROGATES.sub('\ufffd', value)


def _too_large(text, what):
    """The refusal of an output longer than MAX_OUTPUT_CHARS; None when it fits."""
    if len(text) > MAX_OUTPUT_CHARS:
        return ('the %s output is %d characters long, over the %d this parser reads (MAX_OUTPUT_CHARS): not parsed'
                % (what, len(text), MAX_OUTPUT_CHARS))
    return None


def _clean(value):
    """Strip a raw cell; return None for the placeholders nvidia-smi prints when it has no value."""
    if value is None:
        return None
    value = value.strip()
    if value == '' or value in UNAVAILABLE_VALUES:
        return None
    return value


def normalize_field_name(header_cell):
    """'memory.total [MiB]' -> ('memory.total', 'MiB'); 'pci.bus_id' -> ('pci.bus_id', None).

    The unit is the bracketed text at the end: from the first '[' after the last ']' before the closing one (what
    ``^(.*?)\\s*\\[([^\\]]*)\\]\\s*$`` matched, in linear time: that pattern was quadratic on a cell of spaces).
    """
    cell = header_cell.strip()
    if cell.endswith(']'):
        inner = cell[:-1]
        opening = inner.find('[', inner.rfind(']') + 1)
        if opening >= 0 and '\n' not in inner[:opening].rstrip():
            return inner[:opening].strip(), inner[opening + 1:].strip()
    return cell, None


def field_key(field):
    """Result key for a --query-gpu field name (known fields get their documented key, others dots -> underscores)."""
    name = normalize_field_name(field)[0].lower()
    return QUERY_FIELD_KEYS.get(name, re.sub(r'[^a-z0-9]+', '_', name).strip('_'))


def parse_mib(value, unit=None):
    """'143771 MiB' -> 143771, '143771' -> 143771 (unit from the header, MiB by default), '[N/A]' -> None."""
    value = _clean(value)
    if value is None:
        return None
    match = _MEMORY_VALUE.match(value)
    if not match:
        return None
    number = float(match.group('value'))
    unit = (match.group('unit') or unit or 'MiB').lower()
    factor = _UNIT_FACTOR_MIB.get(unit)
    if factor is None:
        return None
    return int(round(number * factor))


def _convert(key, value, unit=None):
    if key in _MIB_KEYS:
        return parse_mib(value, unit)
    value = _clean(value)
    if value is None:
        return None
    if key in _INT_KEYS:
        try:
            return int(value)
        except ValueError:
            return None
    return value


def _split_csv_line(line):
    # GPU names and the values queried here never contain commas; nvidia-smi does not quote.
    return [cell.strip() for cell in line.split(',')]


def _looks_like_header(cells):
    names = [normalize_field_name(cell)[0] for cell in cells]
    return all(_HEADER_CELL.match(name) for name in names) and any(name in QUERY_FIELD_KEYS for name in names)


def parse_query_csv(text, fields=None):
    """Parse ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``.

    With a header line, the header decides the columns (``fields`` is ignored); without one,
    ``fields`` (the list given to --query-gpu, in order) must be passed.

    Returns ``{'gpus': [...], 'fields': [...], 'units': {...}, 'has_header': bool, 'problems': [...]}``.
    Each GPU is a dict keyed by :func:`field_key` (``memory.total`` -> ``memory_total_mib`` as an
    int in MiB, ``index``/``count`` as ints, unavailable values as None). Lines that do not fit
    are skipped and reported in ``problems``, never raised.
    """
    result = {'gpus': [], 'fields': [], 'units': {}, 'has_header': False, 'problems': []}
    text = as_text(text)
    refusal = _too_large(text, 'query')
    if refusal:
        result['problems'].append(refusal)
        return result
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return result
    first = _split_csv_line(lines[0])
    if _looks_like_header(first):
        result['has_header'] = True
        columns = [normalize_field_name(cell) for cell in first]
        lines = lines[1:]
    elif fields:
        columns = [normalize_field_name(field) for field in fields]
    else:
        result['problems'].append('no header line and no field list: cannot tell the columns apart')
        return result
    result['fields'] = [name for name, unit in columns]
    result['units'] = dict((field_key(name), unit) for name, unit in columns if unit)
    keys = [field_key(name) for name, unit in columns]
    for line in lines:
        cells = _split_csv_line(line)
        if len(cells) != len(keys):
            result['problems'].append('expected %d values, got %d: %s' % (len(keys), len(cells), line.strip()))
            continue
        gpu = {}
        for (name, unit), key, cell in zip(columns, keys, cells):
            gpu[key] = _convert(key, cell, unit)
        result['gpus'].append(gpu)
    return result


def _table_cells(line):
    """'| a | b | c |' -> ['a', 'b', 'c'] (raw, unstripped); None for lines that are not table rows."""
    stripped = line.rstrip()
    if not stripped.startswith('|') or not stripped.endswith('|') or len(stripped) < 2:
        return None
    return stripped[1:-1].split('|')


def _parse_first_cell(cell):
    """'  0  NVIDIA H200                    On  ' -> (0, 'NVIDIA H200', 'On').

    The index is the first word, all digits (at most 6), and something must follow it; split() instead of
    ``^\\s*(\\d+)\\s+(\\S.*?)\\s*$``, whose lazy part rescanned the trailing blanks from every position (quadratic).
    """
    parts = cell.split(None, 1)
    if len(parts) != 2 or not parts[0].isdigit() or not parts[0].isascii() or len(parts[0]) > 6 or '\n' in parts[1].strip():
        return None
    index = int(parts[0])
    rest = parts[1].strip()
    persistence = None
    for candidate in _PERSISTENCE:
        if rest.endswith(' ' + candidate):
            persistence = candidate
            rest = rest[:-len(candidate)].rstrip()
            break
    return index, rest.strip(), persistence


def parse_table(text):
    """Parse the human ``nvidia-smi`` table.

    Returns ``{'nvidia_smi_version', 'driver_version', 'cuda_version', 'table_width', 'gpus': [...]}``.
    ``cuda_version`` is None when the header says ``N/A`` or has no CUDA field. Each GPU carries
    ``index``, ``name``, ``name_truncated`` (the table cuts long names to ``...``), ``persistence_mode``,
    ``bus_id``, ``memory_used_mib`` and ``memory_total_mib`` (None when the row says ``Not Supported``).
    Only the GPU section is read: the MIG and process sections below it are ignored. ``problems`` holds the
    refusal of an output over MAX_OUTPUT_CHARS (nothing else is parsed then).
    """
    result = {'nvidia_smi_version': None, 'driver_version': None, 'cuda_version': None, 'table_width': None, 'gpus': [],
              'problems': []}
    text = as_text(text)
    refusal = _too_large(text, 'table')
    if refusal:
        result['problems'].append(refusal)
        return result
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        if result['table_width'] is None and stripped.startswith('+-') and stripped.endswith('+'):
            result['table_width'] = len(stripped)
        if result['driver_version'] is None and 'NVIDIA-SMI' in line:
            smi = _SMI_VERSION.search(line)
            driver = _DRIVER_VERSION.search(line)
            cuda = _CUDA_VERSION.search(line)
            if smi:
                result['nvidia_smi_version'] = smi.group('v')
            if driver:
                result['driver_version'] = _clean(driver.group('v'))
            if cuda:
                result['cuda_version'] = _clean(cuda.group('v'))
            continue
        if 'Processes:' in line or 'MIG devices:' in line:
            break
        if stripped.startswith('+') or stripped.startswith('|='):
            current = None
            continue
        cells = _table_cells(stripped)
        if not cells or len(cells) < 2:
            continue
        bus = _BUS_ID.search(cells[1])
        first = _parse_first_cell(cells[0]) if bus else None
        if first is not None:
            index, name, persistence = first
            current = {
                'index': index,
                'name': name,
                'name_truncated': name.endswith(_TRUNCATION_MARK),
                'persistence_mode': persistence,
                'bus_id': bus.group('bus'),
                'memory_used_mib': None,
                'memory_total_mib': None,
            }
            result['gpus'].append(current)
            continue
        if current is not None and current['memory_total_mib'] is None:
            memory = _MEMORY_USAGE.search(cells[1])
            if memory:
                current['memory_used_mib'] = int(memory.group('used'))
                current['memory_total_mib'] = int(memory.group('total'))
    return result


def _xml_text(element, path):
    if element is None:
        return None
    found = element.find(path)
    if found is None or found.text is None:
        return None
    return _clean(found.text)


def parse_xml(text):
    """Parse ``nvidia-smi -q -x``.

    Returns ``{'driver_version', 'cuda_version', 'attached_gpus', 'gpus': [...], 'problems': [...]}``;
    each GPU has ``index`` (enumeration order, as nvidia-smi numbers them), ``name``, ``bus_id``,
    ``memory_total_mib``, ``uuid``, ``minor_number``, ``architecture`` and ``compute_cap``. The
    580-series XML has no compute capability element, so ``compute_cap`` is None unless a future
    DTD adds one (``compute_cap`` or ``cuda_compute_capability``).
    """
    result = {'driver_version': None, 'cuda_version': None, 'attached_gpus': None, 'gpus': [], 'problems': []}
    text = as_text(text)
    refusal = _too_large(text, 'XML')
    if refusal:
        result['problems'].append(refusal)
        return result
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError as exc:
        result['problems'].append('not valid XML: %s' % exc)
        return result
    if root.tag != 'nvidia_smi_log':
        result['problems'].append('unexpected root element %r' % root.tag)
        return result
    result['driver_version'] = _xml_text(root, 'driver_version')
    result['cuda_version'] = _xml_text(root, 'cuda_version')
    attached = _xml_text(root, 'attached_gpus')
    result['attached_gpus'] = int(attached) if attached and attached.isdigit() else None
    for position, gpu in enumerate(root.findall('gpu')):
        minor = _xml_text(gpu, 'minor_number')
        compute_cap = _xml_text(gpu, 'compute_cap') or _xml_text(gpu, 'cuda_compute_capability')
        result['gpus'].append({
            'index': position,
            'name': _xml_text(gpu, 'product_name'),
            'bus_id': _xml_text(gpu, 'pci/pci_bus_id') or _clean(gpu.get('id')),
            'memory_total_mib': parse_mib(_xml_text(gpu, 'fb_memory_usage/total')),
            'uuid': _xml_text(gpu, 'uuid'),
            'minor_number': int(minor) if minor and minor.isdigit() else None,
            'architecture': _xml_text(gpu, 'product_architecture'),
            'compute_cap': compute_cap,
        })
    return result


def classify_error(rc, stdout='', stderr='', found=True):
    """Turn a failed (or suspicious) nvidia-smi run into ``{'kind', 'message', ...}``; None when it looks fine.

    ``found=False`` (or rc 127) means the binary is missing. The text is checked before the return
    code because nvidia-smi prints its errors on stdout and the codes are shared by several causes.
    A driver/library mismatch also reports ``nvml_library_version`` (the user-space side).
    """
    text = '\n'.join(part for part in (as_text(stdout).strip(), as_text(stderr).strip()) if part)
    if not found or rc == 127:
        return {'kind': 'not_found', 'message': text or 'nvidia-smi was not found', 'rc': rc}
    kind = None
    for candidate, pattern in ERROR_PATTERNS:
        if pattern.search(text):
            kind = candidate
            break
    if kind is None:
        if rc in (0, None):
            return None
        kind = RETURN_CODE_KINDS.get(rc, 'unknown')
    lines = []
    for line in text.splitlines():
        if line.strip():
            lines.append(line.strip()[:1000])
            if len(lines) == 3:
                break
    error = {'kind': kind, 'message': ' '.join(lines) if lines else 'nvidia-smi exited with %s' % rc, 'rc': rc}
    if kind == 'driver_mismatch':
        match = re.search(r'NVML library version:\s*(\S{1,100})', text)
        error['nvml_library_version'] = match.group(1) if match else None
    return error


def version_tuple(version):
    """'580.159.04' -> (580, 159, 4); non-numeric parts compare after numbers ('13.0.0rc' -> (13, 0, 0, 'rc')).

    Raises ValueError for None, an empty version and one longer than MAX_VERSION_CHARS.
    """
    if version is None:
        raise ValueError('no version given')
    text = str(version).strip()
    if len(text) > MAX_VERSION_CHARS:
        raise ValueError('version %r... is %d characters long, over %d' % (text[:40], len(text), MAX_VERSION_CHARS))
    parts = []
    for component in text.replace('-', '.').split('.'):
        if component == '':
            continue
        # The leading ASCII digits, then the rest as ^(\d+)(.*)$ split them ('.' not crossing a newline, '$' also
        # before a final one), without its backtracking: quadratic on a run of digits before a newline.
        match = _LEADING_DIGITS.match(component)
        rest = component[match.end():] if match else None
        if rest is not None and rest.endswith('\n'):
            rest = rest[:-1]
        if match and '\n' not in rest:
            parts.append(int(match.group(0)))
            if rest:
                parts.append(rest)
        else:
            parts.append(component)
    if not parts:
        raise ValueError('empty version %r' % (version,))
    return tuple(parts)


def compare_versions(a, b):
    """Numeric per-component comparison of driver/CUDA versions: -1 if a < b, 0 if equal, 1 if a > b.

    '580.65.06' < '580.159.04' (65 < 159, not a string comparison); missing trailing components
    count as 0, so '580.142' == '580.142.0'.
    """
    left, right = list(version_tuple(a)), list(version_tuple(b))
    length = max(len(left), len(right))
    left += [0] * (length - len(left))
    right += [0] * (length - len(right))
    for x, y in zip(left, right):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return -1 if x < y else 1
        if isinstance(x, int):
            return 1
        if isinstance(y, int):
            return -1
        return -1 if x < y else 1
    return 0


def normalize_bus_id(bus_id):
    """Canonical PCI bus id for matching: '0000:03:00.0' and '00000000:03:00.0' -> '00000000:03:00.0'."""
    if not bus_id:
        return None
    match = _BUS_ID.search(bus_id)
    if not match:
        return bus_id.strip().upper()
    domain, rest = match.group('bus').split(':', 1)
    return '%08X:%s' % (int(domain, 16), rest.upper())


def merge_gpu_views(csv_gpus=None, table_gpus=None, xml_gpus=None):
    """One list of GPUs from the three views: the CSV first, then the table, then the XML fill what is missing.

    GPUs are matched by bus id (normalised), else by index. Names from the CSV or the XML are never
    truncated; a name that only the table knows keeps its ``...`` and ``name_truncated: True``.
    Each GPU: ``index``, ``name``, ``name_truncated``, ``compute_cap``, ``memory_total_mib``, ``bus_id``, ``uuid``.
    """
    merged = []
    by_bus = {}
    by_index = {}

    def _slot(gpu):
        bus = normalize_bus_id(gpu.get('bus_id'))
        if bus is not None and bus in by_bus:
            return by_bus[bus]
        if bus is None and gpu.get('index') is not None and gpu.get('index') in by_index:
            return by_index[gpu.get('index')]
        if bus is not None and gpu.get('index') is not None and gpu.get('index') in by_index:
            candidate = by_index[gpu.get('index')]
            if normalize_bus_id(candidate.get('bus_id')) is None:
                return candidate
        entry = {'index': None, 'name': None, 'name_truncated': False, 'compute_cap': None, 'memory_total_mib': None,
                 'bus_id': None, 'uuid': None}
        merged.append(entry)
        return entry

    def _register(entry):
        bus = normalize_bus_id(entry.get('bus_id'))
        if bus is not None:
            by_bus[bus] = entry
        if entry.get('index') is not None:
            by_index[entry['index']] = entry

    for source, gpus in (('csv', csv_gpus), ('table', table_gpus), ('xml', xml_gpus)):
        for gpu in gpus or []:
            entry = _slot(gpu)
            for key in ('index', 'compute_cap', 'memory_total_mib', 'bus_id', 'uuid'):
                if entry.get(key) is None and gpu.get(key) is not None:
                    entry[key] = gpu[key]
            name = gpu.get('name')
            if name:
                truncated = source == 'table' and bool(gpu.get('name_truncated'))
                if entry['name'] is None or (entry['name_truncated'] and not truncated):
                    entry['name'] = name
                    entry['name_truncated'] = truncated
            _register(entry)
    merged.sort(key=lambda gpu: (gpu['index'] is None, gpu['index'] if gpu['index'] is not None else 0))
    return merged


def _command_record(args, rc, error):
    return {'args': list(args), 'rc': rc, 'error_kind': error['kind'] if error else None}


def gather(run, path, query_fields=DEFAULT_QUERY_FIELDS, include_table=True, include_xml=False):
    """Run nvidia-smi through ``run(args) -> (rc, stdout, stderr)`` and combine what it says.

    ``path`` None means the binary was not found. The CSV query is the primary source; when the
    driver rejects ``compute_cap`` (drivers before it existed) the query is repeated without it.
    The plain table adds the CUDA version the driver supports and GPUs the CSV could not give; the
    XML (optional) fills remaining gaps. Never raises for nvidia-smi failures: they end up in
    ``nvidia_smi.error_kind`` / ``nvidia_smi.error``.

    Returns ``{'gpus', 'gpu_count', 'driver_version', 'cuda_driver_version', 'nvidia_smi': {...}}``.
    """
    status = {'found': path is not None, 'path': path, 'rc': None, 'error_kind': None, 'error': None,
              'nvml_library_version': None, 'compute_cap_supported': None, 'commands': [], 'problems': []}
    facts = {'gpus': [], 'gpu_count': 0, 'driver_version': None, 'cuda_driver_version': None, 'nvidia_smi': status}
    if path is None:
        error = classify_error(127, found=False)
        status.update(error_kind=error['kind'], error=error['message'], rc=None)
        return facts

    errors = []

    def _run(args):
        rc, out, err = run(list(args))
        error = classify_error(rc, out, err)
        status['commands'].append(_command_record(args, rc, error))
        if error:
            errors.append(error)
        return rc, out, error

    fields = list(query_fields)
    rc, out, error = _run([path, '--query-gpu=' + ','.join(fields), '--format=csv,nounits'])
    if error and error['kind'] == 'invalid_argument' and 'compute_cap' in fields and 'compute_cap' in error['message']:
        errors.pop()
        status['compute_cap_supported'] = False
        fields = [field for field in fields if field != 'compute_cap']
        rc, out, error = _run([path, '--query-gpu=' + ','.join(fields), '--format=csv,nounits'])
    elif not error and 'compute_cap' in fields:
        status['compute_cap_supported'] = True
    status['rc'] = rc
    csv_gpus = []
    if not error:
        parsed = parse_query_csv(out, fields)
        csv_gpus = parsed['gpus']
        status['problems'].extend('query: %s' % problem for problem in parsed['problems'])
        drivers = [gpu.get('driver_version') for gpu in csv_gpus if gpu.get('driver_version')]
        if drivers:
            facts['driver_version'] = drivers[0]

    table = {'gpus': []}
    if include_table and not (error and error['kind'] in ('not_found', 'no_driver', 'driver_mismatch')):
        rc_table, out_table, error_table = _run([path])
        if not error_table:
            table = parse_table(out_table)
            status['problems'].extend('table: %s' % problem for problem in table['problems'])
            facts['driver_version'] = facts['driver_version'] or table['driver_version']
            facts['cuda_driver_version'] = table['cuda_version']

    xml = {'gpus': []}
    if include_xml and not (error and error['kind'] in ('not_found', 'no_driver', 'driver_mismatch')):
        rc_xml, out_xml, error_xml = _run([path, '-q', '-x'])
        if not error_xml:
            xml = parse_xml(out_xml)
            status['problems'].extend('xml: %s' % problem for problem in xml['problems'])
            facts['driver_version'] = facts['driver_version'] or xml['driver_version']
            facts['cuda_driver_version'] = facts['cuda_driver_version'] or xml['cuda_version']

    gpus = merge_gpu_views(csv_gpus, table['gpus'], xml['gpus'])
    facts['gpus'] = gpus
    facts['gpu_count'] = len(gpus)
    if errors:
        first = errors[0]
        status['error_kind'] = first['kind']
        status['error'] = first['message']
        status['nvml_library_version'] = first.get('nvml_library_version')
    return facts
