"""The regression gate behind ``bench gate``: its sides (:mod:`~harness.gating.sides`), its rule
and verdicts (:mod:`~harness.gating.rule`), and its Markdown and JUnit output
(:mod:`~harness.gating.report`). Named ``gating`` so that ``harness.gate`` stays the function."""
