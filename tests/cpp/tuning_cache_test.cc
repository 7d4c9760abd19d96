// src/kernels/cpu/tuning_cache.h: choices kept across instances of one file
// (as across processes), and files it must not trust.
#include "kernels/cpu/tuning_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace singa::cpu {
namespace {

namespace fs = std::filesystem;

class TuningFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("singa-tuning-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path() const { return (dir_ / "sub" / "layouts.tsv").string(); }
  fs::path dir_;
};

TEST_F(TuningFileTest, ChoicesPersistToTheNextInstanceAndTheFirstStays) {
  {
    TuningFile f(Path());
    EXPECT_EQ(f.Lookup("conv a"), std::nullopt);
    f.Remember("conv a", "c16");
    f.Remember("conv a", "any");  // the first choice for a key stays
    f.Remember("conv b", "plain");
    EXPECT_EQ(f.Lookup("conv a"), "c16");
  }
  TuningFile again(Path());  // the directory was created
  EXPECT_EQ(again.Lookup("conv a"), "c16");
  EXPECT_EQ(again.Lookup("conv b"), "plain");
  EXPECT_EQ(again.Lookup("conv c"), std::nullopt);
}

TEST_F(TuningFileTest, MalformedLinesAndUncleanChoicesAreIgnored) {
  fs::create_directories(fs::path(Path()).parent_path());
  std::ofstream(Path()) << "no tab here\n\tno key\nno choice\t\nk1\tgood\nk2\ttwo\ttabs\n"
                        << std::string(100, '\0') << "\tbinary\n";
  TuningFile f(Path());
  EXPECT_EQ(f.Lookup("k1"), "good");
  EXPECT_EQ(f.Lookup("no tab here"), std::nullopt);
  EXPECT_EQ(f.Lookup("no choice"), std::nullopt);
  EXPECT_EQ(f.Lookup("k2"), std::nullopt);
  f.Remember("bad\nkey", "x");
  f.Remember("key", "bad\tchoice");
  EXPECT_EQ(f.Lookup("bad\nkey"), std::nullopt);
  EXPECT_EQ(f.Lookup("key"), std::nullopt);
}

TEST_F(TuningFileTest, AFilePastItsBoundIsNeitherReadNorGrown) {
  fs::create_directories(fs::path(Path()).parent_path());
  {
    std::ofstream out(Path());
    out << "k\tv\n" << std::string(TuningFile::kMaxBytes, 'x') << "\n";
  }
  const auto size = fs::file_size(Path());
  TuningFile f(Path());
  EXPECT_EQ(f.Lookup("k"), std::nullopt);
  f.Remember("k2", "v2");
  EXPECT_EQ(f.Lookup("k2"), "v2");  // kept in memory
  EXPECT_EQ(fs::file_size(Path()), size);
}

TEST_F(TuningFileTest, AnUnwritablePlaceOrNoPathKeepsChoicesInMemory) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "sub") << "a file where the directory would be";
  TuningFile blocked(Path());
  blocked.Remember("k", "v");
  EXPECT_EQ(blocked.Lookup("k"), "v");
  EXPECT_EQ(TuningFile(Path()).Lookup("k"), std::nullopt);
  TuningFile memory("");
  memory.Remember("k", "v");
  EXPECT_EQ(memory.Lookup("k"), "v");
}

}  // namespace
}  // namespace singa::cpu
