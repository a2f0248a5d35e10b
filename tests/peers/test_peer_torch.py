"""The torch adapter against the double-precision reference (peer_case.py)."""

import unittest

from peer_case import CASES, PeerCases


class TestTorch(PeerCases, unittest.TestCase):
    PEER = "torch"
    # torch computes every case, rows that see no key included (+0).
    EXPECT = {name: "ok" for name in CASES}
    TYPES = {"f16": "ok", "bf16": "ok"}

    def test_op_names_the_mask(self):
        for name, want in (("causal_square", "is_causal=True"), ("causal_nq_lt_nkv_gqa", "bottom-right bool"),
                           ("gqa", "enable_gqa=True")):
            with self.subTest(case=name):
                reply, _ = self.check_case(name)
                self.assertIn(want, reply["op"])


if __name__ == "__main__":
    unittest.main()
