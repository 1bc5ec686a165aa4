"""The canonical string, byte for byte: the server's own unit vectors
(tests/unit/api_auth_test.cpp), so client and server agree on every rule."""

import unittest

from movegate import signing


class CanonicalQuery(unittest.TestCase):
    def test_server_vectors(self):
        vectors = {
            "": "",
            "b=2&a=1": "a=1&b=2",
            "a=2&a=1&a=2": "a=1&a=2&a=2",
            "a=b&a=B": "a=B&a=b",
            "b=1&a%5B%5D=x&A=1": "A=1&a%5B%5D=x&b=1",
            "q=a+b": "q=a%2Bb",
            "q=a%20b": "q=a%20b",
            "x=%e2%82%ac": "x=%E2%82%AC",
            "k=%7E%2D%2E%5F%41z9": "k=~-._Az9",
            "a=b=c": "a=b%3Dc",
            "p=/x?y": "p=%2Fx%3Fy",
            "x=\u20ac": "x=%E2%82%AC",
            "\u00e9=1": "%C3%A9=1",
            "flag&a=1": "a=1&flag=",
            "a=%zz&b=%4": "a=%25zz&b=%254",
            "a=1&&b=2&": "a=1&b=2",
        }
        for raw, expected in vectors.items():
            with self.subTest(raw=raw):
                self.assertEqual(signing.canonical_query(raw), expected)

    def test_plus_is_a_plus_never_a_space(self):
        self.assertEqual(signing.canonical_query("q=a%2Bb"), signing.canonical_query("q=a+b"))
        self.assertNotEqual(signing.canonical_query("q=a%20b"), signing.canonical_query("q=a+b"))

    def test_flag_without_value_equals_empty_value(self):
        self.assertEqual(signing.canonical_query("flag"), signing.canonical_query("flag="))

    def test_bytes_that_are_not_utf8_are_kept(self):
        self.assertEqual(signing.canonical_query(b"x=%FF%00"), "x=%FF%00")
        self.assertEqual(signing.percent_decode("%ff%4"), b"\xff%4")

    def test_decode_keeps_order_and_plus(self):
        self.assertEqual(
            signing.decode_query("q=a+b%20c&flag&q=%41"),
            [(b"q", b"a+b c"), (b"flag", b""), (b"q", b"A")],
        )


class Signatures(unittest.TestCase):
    def test_canonical_request_layout(self):
        self.assertEqual(
            signing.canonical_request("GET", "/v3/x", "b=1&a=2", b"", "1700000000", "n"),
            b"GET\n/v3/x\na=2&b=1\n"
            b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n1700000000\nn",
        )

    def test_server_signature_vectors(self):
        self.assertEqual(
            signing.sign_request(
                "super-secret-0123456789",
                "POST",
                "/v3/movements/abc%2Fdef/approve",
                "q=a+b%20c&a=2&a=1",
                b'{"amount":"1.5"}',
                "1700000000",
                "nonce_0123456789abcdef",
            ),
            "bc6728a85bad28f074678374bd32c31038b44e1a0aa21110b2c1a42fa44d0135",
        )
        self.assertEqual(
            signing.sign_request(
                "0123456789abcdef", "GET", "/v3/templates", "", b"", "1700000000", "ABCDEFGHIJKLMNOP"
            ),
            "f0b440e0902131124435c323f70acdae0745346f08ce9d88b75bc4fc161ced58",
        )

    def test_headers_split_the_target_at_the_first_question_mark(self):
        h = signing.signed_headers("k", "s" * 16, "GET", "/v3/movements?b=1&a=2", b"", 1700000000, "n" * 16)
        self.assertEqual(
            h["X-QTG-Signature"],
            signing.sign_request("s" * 16, "GET", "/v3/movements", "a=2&b=1", b"", "1700000000", "n" * 16),
        )
        self.assertEqual(h["X-QTG-Timestamp"], "1700000000")

    def test_nonces_are_fresh_and_in_the_server_alphabet(self):
        a, b = signing.new_nonce(), signing.new_nonce()
        self.assertNotEqual(a, b)
        for n in (a, b):
            self.assertTrue(16 <= len(n) <= 128)
            self.assertRegex(n, r"^[A-Za-z0-9_-]+$")


if __name__ == "__main__":
    unittest.main()
