"""DeepEval's ConversationSimulator on the bench's goals, its simulator model a counting stand-in that
answers every structured request at once (so what is measured is DeepEval's own calls and orchestration,
not a model): each conversation runs to its turn budget, as one whose user is never satisfied does.

    python bench/deepeval_simulator.py GOALS.jsonl TURNS -> calls per conversation and per turn, seconds
"""
import asyncio
import json
import os
import sys
import time

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")

from deepeval.dataset import ConversationalGolden
from deepeval.models import DeepEvalBaseLLM
from deepeval.simulator import ConversationSimulator
from deepeval.test_case import Turn

calls = {"n": 0}


class Counting(DeepEvalBaseLLM):
    def __init__(self):
        super().__init__(model="counting")

    def load_model(self):
        return self

    def _answer(self, prompt, schema):
        calls["n"] += 1
        fields = schema.model_fields if schema is not None else {}
        if "simulated_input" in fields:
            return schema(simulated_input=f"message {calls['n']}: what I asked, once more?")
        if "is_complete" in fields:
            return schema(is_complete=False, reason="not yet")
        if "index" in fields:
            return schema(index=None, reason="none")
        return schema(**{k: None for k in fields}) if schema is not None else "ok"

    def generate(self, prompt, schema=None):
        return self._answer(prompt, schema)

    async def a_generate(self, prompt, schema=None):
        return self._answer(prompt, schema)

    def get_model_name(self):
        return "counting"


async def assistant(input, turns=None, thread_id=None):
    return Turn(role="assistant", content="The X2 weighs 14 kilograms.")


def main(path, turns):
    goals = [json.loads(l) for l in open(path, encoding="utf-8")]
    goldens = [
        ConversationalGolden(scenario=f"{g['goal']['persona']} wants to know: {g['goal']['want']}",
                             expected_outcome=g["expected_answer"])
        for g in goals
    ]
    simulator = ConversationSimulator(model_callback=assistant, simulator_model=Counting(), max_concurrent=1)
    started = time.perf_counter()
    cases = simulator.simulate(conversational_goldens=goldens, max_user_simulations=turns)
    seconds = time.perf_counter() - started
    user_turns = sum(sum(1 for t in c.turns if t.role == "user") for c in cases)
    print(json.dumps({
        "conversations": len(cases),
        "user_turns": user_turns,
        "model_calls": calls["n"],
        "calls_per_conversation": calls["n"] / len(cases),
        "calls_per_user_turn": calls["n"] / max(user_turns, 1),
        "seconds": seconds,
        "seconds_per_conversation": seconds / len(cases),
    }))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
