// The pure half of a restart under its own name (SPEC §8): /proc/<pid>/stat
// and id-file parsing, and whether a holder of the name is provably dead,
// provably alive or neither.
#include <boost/test/unit_test.hpp>

#include "domain/process_identity.hpp"

using namespace mg::domain;

namespace {

// A real line (cat's own), fields 3.. as the kernel writes them.
const std::string tail = " R 22189 22189 3350 0 -1 4194304 121 0 0 0 0 0 0 0 20 0 1 0 143133 "
                         "3133440 366 18446744073709551615 94251905855488 0 0 0 0 17 1 0 0\n";

process_identity me() {
  return {"0123456789abcdef0123456789abcdef", "5e6b1c1e-0c8a-4a55-9d7e-3f1a2b3c4d5e", 4026531836,
          4242, 143133};
}

pid_look running(std::uint64_t start_time, char state = 'S') {
  return {pid_look::kind::process, {state, start_time}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(own_name_identity)

BOOST_AUTO_TEST_CASE(proc_stat_reads_state_and_start_time_after_the_last_paren) {
  auto plain = parse_proc_stat("22199 (cat)" + tail);
  BOOST_REQUIRE(plain);
  BOOST_TEST(plain->state == 'R');
  BOOST_TEST(plain->start_time == 143133u);
  // A command may hold spaces and parentheses, even ") 9 9 9" that looks
  // like fields: only the last ')' ends it.
  for (const char* comm :
       {"(my prog)", "(a) b (c)", "((x)", "() 1 2 3 4 5 6 7 8 9 10 11 12 13)", "(:) )"}) {
    auto parsed = parse_proc_stat(std::string("7 ") + comm + tail);
    BOOST_REQUIRE_MESSAGE(parsed, comm);
    BOOST_TEST(parsed->start_time == 143133u, comm);
    BOOST_TEST(parsed->state == 'R', comm);
  }
  auto zombie = parse_proc_stat("9 (z) Z 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0");
  BOOST_REQUIRE(zombie);
  BOOST_TEST(zombie->state == 'Z');
  BOOST_TEST(zombie->start_time == 77u);
}

BOOST_AUTO_TEST_CASE(proc_stat_refuses_malformed_lines) {
  for (const std::string& bad :
       {std::string(), std::string("22199 cat") + tail, std::string("(cat)") + tail,
        std::string("x (cat)") + tail, std::string("22199 (cat"),
        std::string("22199 (cat) R 1 2 3"),                                      // too few fields
        std::string("22199 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0"), // negative
        std::string("22199 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1x 0"),
        std::string("22199 (cat) RS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0"),
        std::string("22199 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                    "123456789012345678901 0")}) // overflows
    BOOST_TEST(!parse_proc_stat(bad), bad);
}

BOOST_AUTO_TEST_CASE(id_files_are_trimmed_hex_or_nothing) {
  BOOST_TEST(parse_id_file("0123456789abcdef0123456789abcdef\n") ==
             "0123456789abcdef0123456789abcdef");
  BOOST_TEST(parse_id_file("  5e6b1c1e-0c8a-4a55\n") == "5e6b1c1e-0c8a-4a55");
  BOOST_TEST(parse_id_file("").empty());
  BOOST_TEST(parse_id_file("\n").empty());
  BOOST_TEST(parse_id_file("uninitialized\n").empty());
  BOOST_TEST(parse_id_file("abc def").empty());
  BOOST_TEST(parse_id_file(std::string(65, 'a')).empty());
}

BOOST_AUTO_TEST_CASE(a_holder_is_dead_only_when_its_pid_and_start_time_are_gone_here) {
  auto holder = me();
  holder.pid = 99;
  holder.start_time = 5000;
  using k = holder_verdict::kind;
  BOOST_TEST((judge_holder(me(), holder, {pid_look::kind::no_process, {}}).verdict == k::dead));
  // The pid was reused by a process that started later.
  BOOST_TEST((judge_holder(me(), holder, running(6000)).verdict == k::dead));
  // Exited, not yet reaped.
  BOOST_TEST((judge_holder(me(), holder, running(5000, 'Z')).verdict == k::dead));
  auto alive = judge_holder(me(), holder, running(5000));
  BOOST_TEST((alive.verdict == k::alive));
  BOOST_TEST(alive.reason.find("pid 99") != std::string::npos);
  // /proc could not tell.
  BOOST_TEST((judge_holder(me(), holder, {pid_look::kind::unknown, {}}).verdict == k::unproven));
}

BOOST_AUTO_TEST_CASE(another_machine_boot_or_namespace_or_no_identity_proves_nothing) {
  using k = holder_verdict::kind;
  const pid_look gone{pid_look::kind::no_process, {}};
  auto other = [](auto change) {
    auto h = me();
    change(h);
    return h;
  };
  for (auto holder : {other([](process_identity& h) { h.machine_id = "ffff"; }),
                      other([](process_identity& h) { h.boot_id = "ffff"; }),
                      other([](process_identity& h) { h.pid_namespace = 4026532000; }),
                      process_identity{}, // a row written before holders recorded themselves
                      other([](process_identity& h) { h.start_time = 0; })}) {
    auto v = judge_holder(me(), holder, gone);
    BOOST_TEST((v.verdict == k::unproven));
    BOOST_TEST(!v.reason.empty());
  }
  // Nor does this process's own identity when it cannot read it.
  auto blind = me();
  blind.boot_id.clear();
  BOOST_TEST((judge_holder(blind, me(), gone).verdict == k::unproven));
}

BOOST_AUTO_TEST_SUITE_END()
