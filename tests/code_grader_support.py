"""Helpers shared by the "code" grader tests (``test_graders_code_*.py``).

``fenced`` wraps a program in a response; ``call`` and ``unit`` grade a program as a
``call`` or ``unittest`` task with the shared example tests; :class:`RecordingSandbox`
(behind the ``spy`` fixture of ``conftest.py``) records what the grader sends to the
sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conductor_gym import sandbox
from conductor_gym.graders import grade


def fenced(code: str, tag: str = "python") -> str:
    return f"Here is my solution.\n\n```{tag}\n{code.strip()}\n```\n"


@dataclass
class RecordingSandbox:
    """A spy around the real ``run_python``: it records every argument the grader hands to
    the sandbox (to verify what the sandboxed program can see) and then runs the real
    sandbox unchanged. It is a verification aid, not a mock of the sandbox's behaviour."""

    calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, code: str, **kwargs: Any) -> sandbox.ExecResult:
        self.calls.append({"code": code, **kwargs})
        return REAL_RUN_PYTHON(code, **kwargs)

    def everything_sent(self) -> str:
        parts: list[str] = []
        for call in self.calls:
            parts += [call["code"], call.get("stdin", ""), *map(str, call.get("argv", ()))]
            for name, content in (call.get("files") or {}).items():
                parts += [name, content if isinstance(content, str) else content.decode()]
        return "\n".join(parts)


REAL_RUN_PYTHON = sandbox.run_python


# -- call ------------------------------------------------------------------------------------

CALL_TESTS = [
    {"input": [[2, 7, 11, 15], 9], "output": [0, 1]},
    {"input": [[3, 2, 4], 6], "output": [1, 2]},
    {"input": [[3, 3], 6], "output": [0, 1]},
]


def call(program: str, tests: list[dict[str, Any]] = CALL_TESTS, fn: str = "twoSum") -> Any:
    return grade("code", fenced(program), "", code_kind="call", fn_name=fn, tests=tests)


# -- unittest --------------------------------------------------------------------------------

TEST_CODE = """
import unittest

class TestCases(unittest.TestCase):
    def test_small(self):
        self.assertEqual(task_func([1, 2, 3]), 6)

    def test_empty(self):
        self.assertEqual(task_func([]), 0)

    def test_negative(self):
        self.assertEqual(task_func([-1, 1, -5]), -5)
"""
GOOD = "def task_func(values):\n    return sum(values)"


def unit(program: str, test_code: str = TEST_CODE, **metadata: Any) -> Any:
    return grade(
        "code",
        fenced(program),
        "",
        code_kind="unittest",
        test_code=test_code,
        entry_point="task_func",
        **metadata,
    )


# -- a battery of legitimate BigCodeBench-style solutions --------------------------------
# Written here in BigCodeBench's manner (its canonical solutions are not available
# offline): each task's program, its unittest module and its libs. Every one must pass;
# they use what real tasks use (pandas, numpy and matplotlib returns, mock.patch of
# library functions, logging, dataclasses, files in the work dir, subprocess, psutil).


@dataclass(frozen=True)
class Legit:
    name: str
    program: str
    tests: str
    libs: tuple[str, ...] = ()


LEGITIMATE = [
    Legit(
        "pandas-groupby",
        "import pandas as pd\n\ndef task_func(values):\n"
        "    df = pd.DataFrame({'k': [v % 2 for v in values], 'v': values})\n"
        "    return df.groupby('k', as_index=False)['v'].sum()\n",
        "import unittest\nimport pandas as pd\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_sum(self):\n        out = task_func([1, 2, 3, 4])\n"
        "        pd.testing.assert_frame_equal(out, pd.DataFrame({'k': [0, 1], 'v': [6, 4]}))\n"
        "    def test_type(self):\n        self.assertIsInstance(task_func([1]), pd.DataFrame)\n"
        "        self.assertEqual(list(task_func([5]).columns), ['k', 'v'])\n",
        ("pandas",),
    ),
    Legit(
        "numpy-stats",
        "import numpy as np\n\ndef task_func(values):\n"
        "    a = np.asarray(values, dtype=float)\n    return a.mean(), a.std(), np.sort(a)\n",
        "import unittest\nimport numpy as np\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_stats(self):\n        mean, std, ordered = task_func([3, 1, 2])\n"
        "        self.assertAlmostEqual(mean, 2.0)\n"
        "        self.assertTrue(np.isclose(std, np.std([1, 2, 3])))\n"
        "        np.testing.assert_array_equal(ordered, np.array([1.0, 2.0, 3.0]))\n"
        "        self.assertTrue(np.allclose(ordered, [1, 2, 3]))\n",
        ("numpy",),
    ),
    Legit(
        "matplotlib-axes",
        "import matplotlib.pyplot as plt\n\ndef task_func(values):\n"
        "    fig, ax = plt.subplots()\n    ax.bar(range(len(values)), values)\n"
        "    ax.set_title('Values')\n    ax.set_xlabel('i')\n    return ax\n",
        "import unittest\nimport matplotlib.pyplot as plt\n\nclass TestCases(unittest.TestCase):\n"
        "    def tearDown(self):\n        plt.close('all')\n"
        "    def test_axes(self):\n        ax = task_func([1, 2, 3])\n"
        "        self.assertIsInstance(ax, plt.Axes)\n"
        "        self.assertEqual(ax.get_title(), 'Values')\n"
        "        self.assertEqual(len(ax.patches), 3)\n"
        "        self.assertEqual([p.get_height() for p in ax.patches], [1, 2, 3])\n",
        ("matplotlib",),
    ),
    Legit(
        "pandas-matplotlib-tuple",
        "import pandas as pd\nimport matplotlib.pyplot as plt\n\ndef task_func(values):\n"
        "    df = pd.DataFrame({'x': values})\n    ax = df['x'].plot(kind='hist')\n"
        "    return df, ax\n",
        "import unittest\nimport pandas as pd\nimport matplotlib.pyplot as plt\n\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_both(self):\n        df, ax = task_func([1, 1, 2])\n"
        "        self.assertEqual(df.shape, (3, 1))\n"
        "        self.assertEqual(df['x'].tolist(), [1, 1, 2])\n"
        "        self.assertTrue(ax.get_ylabel() in ('Frequency', ''))\n        plt.close('all')\n",
        ("pandas", "matplotlib"),
    ),
    Legit(
        "requests-patched",
        "import requests\n\ndef task_func(values):\n"
        "    response = requests.get('https://example.com/api', timeout=5)\n"
        "    response.raise_for_status()\n    return [item['id'] for item in response.json()]\n",
        "import unittest\nfrom unittest.mock import patch, MagicMock\n\n"
        "class TestCases(unittest.TestCase):\n"
        "    @patch('requests.get')\n    def test_ids(self, mock_get):\n"
        "        mock_get.return_value.json.return_value = [{'id': 1}, {'id': 2}]\n"
        "        self.assertEqual(task_func([]), [1, 2])\n"
        "        mock_get.assert_called_once()\n"
        "        self.assertEqual(mock_get.return_value.raise_for_status.call_count, 1)\n",
        ("requests",),
    ),
    Legit(
        "os-patched",
        "import os\n\ndef task_func(values):\n"
        "    return sorted(name for name in os.listdir('.') if name.endswith('.txt'))\n",
        "import unittest\nimport os\nfrom unittest.mock import patch\n\n"
        "class TestCases(unittest.TestCase):\n"
        "    @patch('os.listdir', return_value=['b.txt', 'a.txt', 'c.csv'])\n"
        "    def test_listing(self, mocked):\n"
        "        self.assertEqual(task_func([]), ['a.txt', 'b.txt'])\n"
        "        self.assertTrue(mocked.called)\n"
        "        self.assertIs(os.listdir, mocked)\n",
    ),
    Legit(
        "files-csv",
        "import csv, os\n\ndef task_func(values):\n"
        "    path = os.path.join('out', 'data.csv')\n    os.makedirs('out', exist_ok=True)\n"
        "    with open(path, 'w', newline='') as f:\n        writer = csv.writer(f)\n"
        "        writer.writerow(['value'])\n        writer.writerows([[v] for v in values])\n"
        "    return path\n",
        "import unittest, os, csv, shutil\n\nclass TestCases(unittest.TestCase):\n"
        "    def tearDown(self):\n        shutil.rmtree('out', ignore_errors=True)\n"
        "    def test_written(self):\n        path = task_func([4, 5])\n"
        "        self.assertTrue(os.path.exists(path))\n"
        "        with open(path) as f:\n            rows = list(csv.reader(f))\n"
        "        self.assertEqual(rows, [['value'], ['4'], ['5']])\n",
    ),
    Legit(
        "json-regex",
        "import json, re\n\ndef task_func(values):\n"
        "    text = json.dumps({'values': values})\n"
        "    return [int(n) for n in re.findall(r'-?\\d+', text)]\n",
        "import unittest, json\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_numbers(self):\n"
        "        self.assertEqual(task_func([1, -2, 30]), [1, -2, 30])\n"
        "    def test_empty(self):\n        self.assertListEqual(task_func([]), [])\n",
    ),
    Legit(
        "collections-counter",
        "from collections import Counter, namedtuple\nPair = namedtuple('Pair', 'item count')\n\n"
        "def task_func(values):\n"
        "    return [Pair(*entry) for entry in Counter(values).most_common(2)]\n",
        "import unittest\nfrom collections import Counter\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_common(self):\n        out = task_func(['a', 'b', 'a'])\n"
        "        self.assertEqual(out[0], ('a', 2))\n        self.assertEqual(out[0].count, 2)\n"
        "        self.assertDictEqual(dict(out), {'a': 2, 'b': 1})\n",
    ),
    Legit(
        "dataclass-internal",
        "from dataclasses import dataclass, field\n\n@dataclass(order=True)\nclass Item:\n"
        "    weight: float\n    name: str = field(compare=False)\n\n"
        "def task_func(values):\n"
        "    items = sorted(Item(v, str(v)) for v in values)\n"
        "    return [item.name for item in items]\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_sorted(self):\n"
        "        self.assertEqual(task_func([3, 1, 2]), ['1', '2', '3'])\n",
    ),
    Legit(
        "logging-warnings",
        "import logging, warnings\nimport pandas as pd\nlogger = logging.getLogger('task')\n\n"
        "def task_func(values):\n    logging.basicConfig(level=logging.INFO)\n"
        "    logger.info('got %d values', len(values))\n"
        "    with warnings.catch_warnings():\n        warnings.simplefilter('ignore')\n"
        "        warnings.warn('deprecated', DeprecationWarning)\n"
        "    return pd.Series(values, dtype=float).sum()\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_sum(self):\n        self.assertEqual(task_func([1, 2]), 3.0)\n"
        "    def test_logs(self):\n"
        "        with self.assertLogs('task', level='INFO') as seen:\n            task_func([1])\n"
        "        self.assertIn('got 1 values', seen.output[0])\n",
        ("pandas",),
    ),
    Legit(
        "random-seeded",
        "import random\nimport numpy as np\n\ndef task_func(values, seed=42):\n"
        "    random.seed(seed)\n    np.random.seed(seed)\n"
        "    return random.sample(values, 2), np.random.permutation(values).tolist()\n",
        "import unittest, random\nimport numpy as np\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_repeatable(self):\n"
        "        self.assertEqual(task_func([1, 2, 3, 4]), task_func([1, 2, 3, 4]))\n"
        "        sample, perm = task_func([1, 2, 3, 4])\n"
        "        self.assertEqual(sorted(perm), [1, 2, 3, 4])\n"
        "        self.assertEqual(len(sample), 2)\n",
        ("numpy",),
    ),
    Legit(
        "datetime-itertools",
        "from datetime import datetime, timedelta\nimport itertools\n\ndef task_func(values):\n"
        "    start = datetime(2024, 1, 1)\n"
        "    days = [start + timedelta(days=v) for v in values]\n"
        "    return [d.strftime('%Y-%m-%d') for d in days], list(itertools.accumulate(values))\n",
        "import unittest\nfrom datetime import datetime\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_days(self):\n        days, acc = task_func([0, 1, 31])\n"
        "        self.assertEqual(days, ['2024-01-01', '2024-01-02', '2024-02-01'])\n"
        "        self.assertEqual(acc, [0, 1, 32])\n",
    ),
    Legit(
        "subprocess-run",
        "import subprocess, sys\n\ndef task_func(values):\n"
        "    script = 'print(sum(map(int, input().split())))'\n"
        "    result = subprocess.run([sys.executable, '-c', script],\n"
        "                            input=' '.join(map(str, values)), capture_output=True,\n"
        "                            text=True, check=True)\n    return int(result.stdout)\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_sum(self):\n        self.assertEqual(task_func([1, 2, 3]), 6)\n",
    ),
    Legit(
        "psutil-patched",
        "import psutil\n\ndef task_func(values):\n"
        "    usage = psutil.cpu_percent(interval=None)\n"
        "    memory = psutil.virtual_memory().percent\n"
        "    return {'cpu': usage, 'memory': memory, 'n': len(values)}\n",
        "import unittest\nfrom unittest.mock import patch\n\nclass TestCases(unittest.TestCase):\n"
        "    @patch('psutil.cpu_percent', return_value=12.5)\n"
        "    def test_keys(self, cpu):\n        out = task_func([1])\n"
        "        self.assertEqual(out['cpu'], 12.5)\n"
        "        self.assertTrue(0 <= out['memory'] <= 100)\n"
        "        self.assertEqual(set(out), {'cpu', 'memory', 'n'})\n",
        ("psutil",),
    ),
    Legit(
        "pandas-frame-compare",
        "import pandas as pd\nimport numpy as np\n\ndef task_func(values):\n"
        "    df = pd.DataFrame({'a': values, 'b': np.square(values)})\n"
        "    df['c'] = df['a'] + df['b']\n    return df[df['c'] > 2].reset_index(drop=True)\n",
        "import unittest\nimport pandas as pd\nimport numpy as np\n\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_frame(self):\n        out = task_func([1, 2, 3])\n"
        "        expected = pd.DataFrame({'a': [2, 3], 'b': [4, 9], 'c': [6, 12]})\n"
        "        self.assertTrue(out.equals(expected))\n"
        "        pd.testing.assert_series_equal(out['c'], expected['c'])\n"
        "        self.assertEqual(out['c'].tolist(), [6, 12])\n",
        ("pandas", "numpy"),
    ),
]
