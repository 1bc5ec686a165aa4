"""Every /v3 endpoint through the client against a real `movegate serve`."""

import contextlib
import io
import json
import os
import re
import unittest
import uuid

import movegate
from movegate import Client

from plans import CHAIN, FAILING, INTENT, KEYS, MANUAL, TEMPLATES
from proxy import LossyProxy
from serve import SOURCE_DIR, Serve


def readme_snippet() -> str:
    """The README's Python block right after `pip install ./clients/python`."""
    with open(os.path.join(SOURCE_DIR, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"pip install \./clients/python\n```\n\n```python\n(.*?)```", text, re.S)
    if not m:
        raise AssertionError("README: no python block after `pip install ./clients/python`")
    return m.group(1)


def repo_template(name: str) -> dict:
    with open(os.path.join(SOURCE_DIR, "templates", name + ".json"), encoding="utf-8") as f:
        return json.load(f)


class ApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.serve = Serve("api", KEYS, TEMPLATES + [repo_template("sim_linear")]).start()

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()

    def client(self, key_id, **kw):
        return Client(self.serve.base_url, key_id, KEYS[key_id][0], **kw)

    def create(self, template=CHAIN, **kw):
        return self.client("maker").create_movement(
            template["template_key"], INTENT, input_params={"to": "0xabc"}, **kw
        )

    def test_create_approve_wait_and_read_back(self):
        created = self.create(idempotency_key="api-create-1")
        self.assertIsInstance(created, movegate.Movement)
        self.assertEqual(created.request_state, "PENDING_APPROVAL")
        self.assertIs(created.deduplicated, False)
        self.assertEqual(created.intent, INTENT)
        self.assertEqual([n.node_key for n in created.nodes], ["send", "confirm"])
        self.assertTrue(all(n.node_state == "BLOCKED" for n in created.nodes))

        again = self.create(idempotency_key="api-create-1")
        self.assertIs(again.deduplicated, True)
        self.assertEqual(again.id, created.id)

        approved = self.client("checker").approve(created.id, approver_id="ops-2")
        self.assertEqual(approved.approved_by, "checker")
        done = self.client("reader").wait(created.id, "COMPLETED", timeout=60)
        self.assertEqual(done.request_state, "COMPLETED")
        self.assertTrue(all(n.node_state == "COMPLETED" for n in done.nodes))
        self.assertEqual(done.node("send").attempt_no, 1)
        self.assertEqual(self.client("reader").get_movement(created.id).id, created.id)

    def test_automatic_idempotency_key(self):
        a = self.create()
        b = self.create()
        self.assertNotEqual(a.id, b.id, "each call gets a fresh key")
        self.assertTrue(a.raw["id"])

    def test_lost_create_answer_is_retried_with_the_same_key(self):
        proxy = LossyProxy(self.serve.api_port, lose_first=1)
        try:
            c = Client(proxy.url, "maker", KEYS["maker"][0], retry_delay=0.05)
            m = c.create_movement("py_chain", INTENT, input_params={"to": "0xabc"})
        finally:
            proxy.close()
        first = json.loads(proxy.lost_answers[0])
        self.assertEqual(first["deduplicated"], False, "the first attempt created it")
        self.assertEqual(m.id, first["id"])
        self.assertIs(m.deduplicated, True, "the retry found the same movement")

    def test_lost_operator_answer_is_not_resent(self):
        m = self.create()
        proxy = LossyProxy(self.serve.api_port, lose_first=1)
        try:
            c = Client(proxy.url, "checker", KEYS["checker"][0], retry_delay=0.05)
            with self.assertRaises(movegate.TransportError):
                c.approve(m.id)
        finally:
            proxy.close()
        # It happened: a blind resend would have met a 409.
        self.assertEqual(self.client("reader").get_movement(m.id).approval_status, "approved")

    def test_pagination_across_three_pages(self):
        ids = {self.create().id for _ in range(5)}
        reader = self.client("reader")
        first = reader.list_movements(limit=2)
        self.assertEqual(len(first.items), 2)
        self.assertIsNotNone(first.next_cursor)
        second = reader.list_movements(limit=2, cursor=first.next_cursor)
        self.assertEqual(len(second.items), 2)
        third = reader.list_movements(limit=2, cursor=second.next_cursor)
        self.assertGreaterEqual(len(third.items), 1)
        pages = [{m.id for m in p.items} for p in (first, second, third)]
        self.assertEqual(len(set().union(*pages)), sum(len(p) for p in pages), "no repeats")

        seen = [m.id for m in reader.iter_movements(page_size=2)]
        everything = [m.id for m in reader.list_movements(limit=200).items]
        self.assertGreaterEqual(len(seen), 5)
        self.assertEqual(seen, everything, "newest first, no gap, no repeat")
        self.assertLessEqual(ids, set(seen))
        pending = list(reader.iter_movements(state="PENDING_APPROVAL", page_size=2))
        self.assertTrue(all(m.request_state == "PENDING_APPROVAL" for m in pending))
        self.assertLessEqual(ids, {m.id for m in pending})

    def test_events_timeline_pages(self):
        m = self.create()
        self.client("checker").approve(m.id)
        reader = self.client("reader")
        reader.wait(m.id, "COMPLETED")
        timeline = list(reader.iter_events(m.id, page_size=3))
        self.assertGreater(len(timeline), 6, "more than two pages of 3")
        self.assertEqual(len({e.id for e in timeline}), len(timeline))
        events = [e.event_type for e in timeline if e.kind == "event"]
        self.assertEqual(events[0], "request_created")
        self.assertIn("request_completed", events)
        self.assertTrue(all(isinstance(e, movegate.TimelineEntry) for e in timeline))

    def test_reject_and_cancel(self):
        checker = self.client("checker")
        rejected = checker.reject(self.create().id, reason="not today")
        self.assertEqual(rejected.request_state, "REJECTED")
        self.assertEqual(rejected.approval_status, "rejected")
        cancelled = checker.cancel(self.create().id, reason="changed plans")
        self.assertEqual(cancelled.request_state, "CANCELLED")
        self.assertTrue(all(n.node_state == "CANCELLED" for n in cancelled.nodes))

    def test_manual_node_resume_and_complete(self):
        m = self.create(MANUAL)
        checker = self.client("checker")
        checker.approve(m.id)
        reader = self.client("reader")
        waiting = reader.wait(m.id, "WAITING_MANUAL_ACTION")
        self.assertEqual(waiting.node("sign_off").node_state, "READY")
        resumed = checker.resume(m.id)
        self.assertIn(resumed.request_state, ("EXECUTING", "WAITING_MANUAL_ACTION"))
        reader.wait(m.id, "WAITING_MANUAL_ACTION")
        done = checker.complete_node(m.id, "sign_off", provider_refs={"ticket": "OPS-7"})
        self.assertEqual(done.node("sign_off").node_state, "COMPLETED")
        self.assertEqual(done.node("sign_off").provider_refs, {"ticket": "OPS-7"})
        self.assertEqual(reader.wait(m.id, "COMPLETED").request_state, "COMPLETED")

    def test_retry_a_failed_node(self):
        m = self.create(FAILING)
        checker = self.client("checker")
        checker.approve(m.id)
        failed = self.client("reader").wait(m.id, "FAILED")
        self.assertEqual(failed.node("check").node_state, "FAILED")
        retried = checker.retry(m.id, "check")
        self.assertEqual(retried.request_state, "EXECUTING")
        self.assertEqual(retried.node("check").node_state, "READY")
        self.assertEqual(retried.unresolved_nodes, [])
        again = self.client("reader").wait(m.id, "FAILED")
        self.assertEqual(again.node("check").attempt_no, 2)

    def test_wait_gives_up(self):
        m = self.create()
        reader = self.client("reader")
        with self.assertRaises(movegate.WaitTimeout) as t:
            reader.wait(m.id, "COMPLETED", timeout=0.3, interval=0.1)
        self.assertEqual(t.exception.movement.request_state, "PENDING_APPROVAL")
        self.client("checker").reject(m.id)
        with self.assertRaises(movegate.UnexpectedTerminalState) as u:
            reader.wait(m.id, {"COMPLETED", "FAILED"}, timeout=30)
        self.assertEqual(u.exception.movement.request_state, "REJECTED")
        with self.assertRaises(ValueError):
            reader.wait(m.id, "DONE")

    def test_templates(self):
        reader = self.client("reader")
        keys = [t.template_key for t in reader.iter_templates(page_size=1)]
        self.assertEqual(keys, sorted(set(keys)), "by key, each once")
        self.assertLessEqual({"py_chain", "py_manual", "py_failing"}, set(keys))
        one = reader.list_templates(limit=1)
        self.assertEqual(len(one.items), 1)
        self.assertIsNotNone(one.next_cursor)
        chain = reader.get_template("py_chain")
        self.assertIsInstance(chain, movegate.TemplateVersions)
        self.assertEqual(chain.latest_version, 1)
        self.assertEqual(chain.versions[0].risk_controls, {"max_amount": "1000"})
        self.assertEqual(len(chain.versions[0].graph_hash), 64)

    def test_template_proposals(self):
        plan = dict(MANUAL, template_key="py_proposed_" + uuid.uuid4().hex[:8])
        proposer, reviewer = self.client("admin-1"), self.client("admin-2")
        proposal = proposer.propose_template(plan["template_key"], plan)
        self.assertEqual(proposal.state, "pending")
        self.assertEqual(proposal.proposed_by, "admin-1")
        published = reviewer.approve_proposal(proposal.id)
        self.assertEqual(published.state, "approved")
        self.assertEqual(published.published_version, 1)
        self.assertEqual(self.client("reader").get_template(plan["template_key"]).latest_version, 1)

        other = proposer.propose_template(plan["template_key"], plan)
        rejected = reviewer.reject_proposal(other.id, reason="duplicate")
        self.assertEqual(rejected.state, "rejected")
        self.assertEqual(rejected.reviewed_by, "admin-2")

    def test_posture_endpoints(self):
        reader = self.client("reader")
        balances = reader.balances()
        self.assertIsInstance(balances, movegate.Balances)
        self.assertEqual(balances.items, [])
        self.assertGreater(balances.stale_threshold_seconds, 0)
        self.assertIsInstance(reader.executors(), list)
        signers = reader.signers()
        self.assertIn("sim", [s.signer_key for s in signers])
        address = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
        signer = self.client("admin-1").set_expected_identity("sim", address)
        self.assertEqual(signer.signer_key, "sim")
        self.assertEqual(signer.expected_signer_address.lower(), address.lower())
        self.assertEqual(
            next(s for s in reader.signers() if s.signer_key == "sim").expected_signer_address,
            signer.expected_signer_address,
        )

    def test_readme_snippet_runs(self):
        code = readme_snippet()
        self.assertEqual(len(code.strip().splitlines()), 3, "three lines")
        code = (code.replace("http://127.0.0.1:8080", self.serve.base_url)
                    .replace('"ops-1"', '"maker"')
                    .replace('"…the key\'s secret…"', repr(KEYS["maker"][0])))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        self.assertIn("request_state='PENDING_APPROVAL'", out.getvalue())
        self.assertIn("template_key='sim_linear'", out.getvalue())

    def test_raw_queries_are_signed_as_the_server_reads_them(self):
        reader = self.client("reader")
        # Escapes, '+', a flag and an empty piece: the server verifies the
        # signature first (401 otherwise), then refuses the parameters (400).
        for target in (
            "/v3/movements?x=a+b%20c&x=%7e&flag&&y=%zz",
            "/v3/movements?%C3%A9=%E2%82%AC&b=1&a=2",
            "/v3/movements?p=/x?y",
        ):
            with self.subTest(target=target):
                with self.assertRaises(movegate.BadRequest) as e:
                    reader.request("GET", target)
                self.assertEqual(e.exception.code, "invalid_request")
        page = reader.request("GET", "/v3/movements?st%61te=PENDING%5FAPPROVAL&limit=%32")
        self.assertLessEqual(len(page["items"]), 2)


if __name__ == "__main__":
    unittest.main()
