"""ragtester: end-to-end testing of retrieval-augmented generation systems, from Python.

The command line's four stages as functions over the same engine (``generate``, ``run``, ``judge``,
``report``) and the common case in one call::

    import ragtester

    def answer(question, history=None):
        return my_rag.ask(question)          # a str, or {"answer": ..., "contexts": [...]}

    result = ragtester.evaluate(answer, docs="manuals/", n_test=5)
    print(result.pass_rate)
    for failure in result.failures():
        print(failure["query"], failure["cause"], failure["evidence"])

Every call writes the run directory the command line writes (``result.out``): ``ragtester report``,
``ragtester diff`` and ``ragtester serve`` read it. Options are the command's flags as keyword arguments.
"""

from ._native import ConfigError, Error, InputError, ProviderError, __version__
from .adapters import from_langchain, from_llama_index
from .api import evaluate, generate, judge, report, run, sample_corpus
from .checks import assert_no_regression, assert_pass_rate
from .results import RunResult, Suite

__all__ = [
    "ConfigError",
    "Error",
    "InputError",
    "ProviderError",
    "RunResult",
    "Suite",
    "__version__",
    "assert_no_regression",
    "assert_pass_rate",
    "evaluate",
    "from_langchain",
    "from_llama_index",
    "generate",
    "judge",
    "report",
    "run",
    "sample_corpus",
]
