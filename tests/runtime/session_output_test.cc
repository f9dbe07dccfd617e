// Session::Start checks where the report goes before counting: placeholders
// expanded, the name made absolute against the working directory at start,
// the directory checked; UNCORE_OUTPUT set but empty is an error.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "uncore/session.h"

namespace uncore {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

SessionOptions OffOptions(std::string output) {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "off";
  o.output = std::move(output);
  return o;
}

class SessionOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fmt::format("{}/session_output_{}_{}", ::testing::TempDir(),
                       getpid(), info->name());
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    // The tests leave at most a few named files.
    for (const char* name : {"a", "b", "out.json", "w.csv", "rel.json"}) {
      std::remove((dir_ + "/" + name).c_str());
    }
    std::remove((dir_ + "/a/" + fmt::format("rel-{}.json", getpid())).c_str());
    rmdir((dir_ + "/a").c_str());
    rmdir((dir_ + "/b").c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(SessionOutputTest, MissingDirectoryFailsAtStart) {
  const std::string output = dir_ + "/no-such-dir/out.json";
  absl::StatusOr<std::unique_ptr<Session>> s =
      Session::Start(OffOptions(output));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  const std::string message = common::StatusMessage(s.status());
  EXPECT_THAT(message, HasSubstr(dir_ + "/no-such-dir"));
  EXPECT_THAT(message, HasSubstr("create the directory first"));
  EXPECT_EQ(Session::Active(), nullptr);
}

TEST_F(SessionOutputTest, UnknownPlaceholderFailsAtStart) {
  absl::StatusOr<std::unique_ptr<Session>> s =
      Session::Start(OffOptions(dir_ + "/out-%z.json"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s.status()),
              HasSubstr("unknown placeholder '%z'"));
  EXPECT_EQ(Session::Active(), nullptr);
}

TEST_F(SessionOutputTest, RelativeNameIsResolvedWhenTheSessionStarts) {
  ASSERT_EQ(mkdir((dir_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir_ + "/b").c_str(), 0755), 0);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir((dir_ + "/a").c_str()), 0);
  absl::StatusOr<std::unique_ptr<Session>> s =
      Session::Start(OffOptions("rel-%p.json"));
  ASSERT_EQ(chdir((dir_ + "/b").c_str()), 0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->Stop().ok());
  ASSERT_EQ(chdir(cwd), 0);
  const std::string written =
      dir_ + "/a/" + fmt::format("rel-{}.json", getpid());
  EXPECT_THAT(ReadAll(written), HasSubstr("\"schema_version\""));
  EXPECT_FALSE(Exists(dir_ + "/b/rel.json"));
}

TEST_F(SessionOutputTest, EmptyOutputInCodeMeansNoReport) {
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(OffOptions(""));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->Stop().ok());
}

TEST_F(SessionOutputTest, WriteReportExpandsPlaceholders) {
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(OffOptions(""));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->WriteReport(dir_ + "/w%%.csv").ok());
  EXPECT_FALSE((*s)->WriteReport(dir_ + "/w%y.csv").ok());
  EXPECT_TRUE((*s)->Stop().ok());
  EXPECT_THAT(ReadAll(dir_ + "/w%.csv"), HasSubstr("region,path"));
  std::remove((dir_ + "/w%.csv").c_str());
}

// Issue 36, R8: a report and the trace (or two reports of one list) naming
// the same file, the report overwrote the trace silently.  Refused at start,
// the paths compared as files: "./x" and "x", a symbolic link, a hard link.
TEST_F(SessionOutputTest, OutputsThatNameOneFileAreRefusedAtStart) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(symlink((dir_ + "/out.json").c_str(), (dir_ + "/a").c_str()), 0);
  std::ofstream(dir_ + "/w.csv") << "old";
  ASSERT_EQ(link((dir_ + "/w.csv").c_str(), (dir_ + "/b").c_str()), 0);
  struct Case {
    std::string output;
    std::string trace;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {dir_ + "/out.json", dir_ + "/out.json", "the trace"},
           {dir_ + "/out.json", dir_ + "/./out.json", "the trace"},
           {dir_ + "/a", dir_ + "/out.json", "the trace"},  // a link to it
           {dir_ + "/w.csv", dir_ + "/b", "the trace"},     // a hard link
           {dir_ + "/out.json," + dir_ + "/../" +
                dir_.substr(dir_.rfind('/') + 1) + "/out.json",
            "", "report output"},
           {dir_ + "/out.json,-," + dir_ + "/a", "", "report output"},
           {dir_ + "/rel.json", "rel.json", "the trace"}}) {
    SessionOptions o = OffOptions(c.output);
    o.trace = c.trace;
    if (c.output.find("rel.json") != std::string::npos) {
      ASSERT_EQ(chdir(dir_.c_str()), 0);
    }
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
    if (s.ok()) {
      EXPECT_TRUE((*s)->Stop().ok());
    }
    ASSERT_FALSE(s.ok()) << c.output << " and " << c.trace << " were taken";
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message = common::StatusMessage(s.status());
    EXPECT_THAT(message, HasSubstr("the same file"));
    EXPECT_THAT(message, HasSubstr(c.says));
    EXPECT_THAT(message, HasSubstr("give each its own name"));
  }
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_EQ(ReadAll(dir_ + "/w.csv"), "old");
  // Different files, and "-" (stderr) twice, are fine.
  SessionOptions o = OffOptions(dir_ + "/out.json,-,-");
  o.trace = dir_ + "/rel.json";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  (*s)->Stop().IgnoreError();
  if (access("/dev/null", W_OK) == 0) {
    SessionOptions null = OffOptions("/dev/null,/dev/null");
    null.trace = "/dev/null";
    absl::StatusOr<std::unique_ptr<Session>> n = Session::Start(null);
    ASSERT_TRUE(n.ok()) << n.status();  // not a file: nothing overwritten
    (*n)->Stop().IgnoreError();
  }
}

// Issue 36, R10: a trace that cannot be written was "the report" in the
// start checks' errors too.
TEST_F(SessionOutputTest, TraceStartChecksNameTheTrace) {
  for (const std::string& trace :
       {dir_ + "/no/such/t.json", dir_, dir_ + "/" + std::string(300, 't')}) {
    SessionOptions o = OffOptions("");
    o.trace = trace;
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
    ASSERT_FALSE(s.ok()) << trace;
    const std::string message = common::StatusMessage(s.status());
    EXPECT_THAT(message, HasSubstr("cannot write the trace to"));
    EXPECT_THAT(message, Not(HasSubstr("report")));
  }
  // A report's are the report's.
  absl::StatusOr<std::unique_ptr<Session>> s =
      Session::Start(OffOptions(dir_ + "/no/such/r.json"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(common::StatusMessage(s.status()),
              HasSubstr("cannot write the report to"));
}

// Issue 36: the sampling warning said "every 3th call".
TEST(SessionWarningsTest, SamplingWarningSaysTheOrdinal) {
  for (const auto& [every, ordinal] : {std::pair<int, std::string>{2, "2nd"},
                                       {3, "3rd"},
                                       {11, "11th"},
                                       {21, "21st"},
                                       {22, "22nd"},
                                       {112, "112th"}}) {
    SessionOptions o;
    o.events = {"imc/CAS_COUNT.RD"};
    o.backend = "sim";
    o.output = "";
    o.sample_every = every;
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    const Results results = (*s)->Collect();
    ASSERT_TRUE((*s)->Stop().ok());
    EXPECT_THAT(results.run.warnings,
                ::testing::Contains(HasSubstr("read on every " + ordinal +
                                              " call of each region")))
        << every;
  }
}

// Sets (or, with nullopt, unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(OptionsFromEnvironmentTest, EmptyOutputVariableIsAnError) {
  ScopedEnv events("UNCORE_EVENTS", "imc/CAS_COUNT.RD");
  {
    ScopedEnv output("UNCORE_OUTPUT", "");
    absl::StatusOr<SessionOptions> o = Session::OptionsFromEnvironment();
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(common::StatusMessage(o.status()),
                ::testing::StartsWith("UNCORE_OUTPUT is empty: "));
  }
  {
    ScopedEnv output("UNCORE_OUTPUT", "  ");
    EXPECT_FALSE(Session::OptionsFromEnvironment().ok());
  }
  {
    ScopedEnv output("UNCORE_OUTPUT", std::nullopt);
    absl::StatusOr<SessionOptions> o = Session::OptionsFromEnvironment();
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->output, "-");
  }
  {
    ScopedEnv output("UNCORE_OUTPUT", "out-%p.json");
    absl::StatusOr<SessionOptions> o = Session::OptionsFromEnvironment();
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->output, "out-%p.json");  // expanded when the session starts
  }
}

// Issue 36, R12: UNCORE_FORCE, UNCORE_MULTIPLEX and UNCORE_FREE_RUNNING
// took any value silently ("maybe" was no, or for UNCORE_FREE_RUNNING yes).
// One parser: the documented values in any case, else an error naming the
// variable, the value and the values it takes.
TEST(OptionsFromEnvironmentTest, BooleanVariablesTakeTheDocumentedValues) {
  ScopedEnv events("UNCORE_EVENTS", "imc/CAS_COUNT.RD");
  const auto read = [](const SessionOptions& o, const std::string& name) {
    if (name == "UNCORE_FORCE") return o.force;
    if (name == "UNCORE_MULTIPLEX") return o.allow_multiplexing;
    return o.use_free_running;
  };
  for (const std::string name :
       {"UNCORE_FORCE", "UNCORE_MULTIPLEX", "UNCORE_FREE_RUNNING"}) {
    for (const auto& [value, expected] :
         {std::pair<std::string, bool>{"1", true},
          {"true", true},
          {"TRUE", true},
          {"Yes", true},
          {"on", true},
          {" ON ", true},
          {"0", false},
          {"false", false},
          {"False", false},
          {"no", false},
          {"NO", false},
          {"off", false}}) {
      ScopedEnv flag(name.c_str(), value);
      absl::StatusOr<SessionOptions> o = Session::OptionsFromEnvironment();
      ASSERT_TRUE(o.ok()) << name << "=" << value << ": " << o.status();
      EXPECT_EQ(read(*o, name), expected) << name << "=" << value;
    }
    for (const std::string bad :
         {"maybe", "2", "", " ", "enable", "y", "nope", "\x1b[31m"}) {
      ScopedEnv flag(name.c_str(), bad);
      absl::StatusOr<SessionOptions> o = Session::OptionsFromEnvironment();
      ASSERT_FALSE(o.ok()) << name << "=\"" << bad << "\" was taken";
      EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
      const std::string message = common::StatusMessage(o.status());
      EXPECT_THAT(message, HasSubstr(name + "=\""));
      EXPECT_THAT(message, HasSubstr("1, true, yes or on"));
      EXPECT_THAT(message, HasSubstr("0, false, no or off"));
    }
    {
      ScopedEnv flag(name.c_str(), "maybe");
      EXPECT_THAT(
          common::StatusMessage(Session::OptionsFromEnvironment().status()),
          HasSubstr(name + "=\"maybe\""));
    }
  }
  // Unset: the defaults.
  absl::StatusOr<SessionOptions> o = Session::OptionsFromEnvironment();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->force);
  EXPECT_FALSE(o->allow_multiplexing);
  EXPECT_TRUE(o->use_free_running);
}

}  // namespace
}  // namespace uncore
