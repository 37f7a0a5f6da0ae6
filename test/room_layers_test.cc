// The rooms' layering as a test: every `#include "room/..."` of a source
// file, and every nbdk_* library a room's CMake library links, must point at
// its own room or one the table below lets it use, so a room below never
// imports or links one above and no directory cycle can appear.
// A room is the longest directory prefix in the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Room -> the other rooms it may include, from the ground up.
const std::map<std::string, std::set<std::string>>& Layers() {
  static const std::map<std::string, std::set<std::string>> layers = {
      {"base", {}},
      {"ceph", {"base"}},
      {"netlink", {"base"}},
      // Who uses an nbd device needs its name and sysfs holders (netlink).
      {"host", {"base", "netlink"}},
      {"journal", {"base", "ceph"}},
      {"encryption", {"base"}},
      {"supervisor", {"base", "ceph", "netlink", "journal"}},
      {"csi", {"base", "ceph", "netlink", "journal", "encryption", "supervisor"}},
      {"csi/node", {"base", "ceph", "netlink", "host", "journal", "encryption", "supervisor", "csi"}},
      {"csi/controller", {"base", "ceph", "journal", "encryption", "csi"}},
      {"csi/heal", {"base", "ceph", "netlink", "host", "journal", "supervisor", "csi", "csi/node"}},
      {"daemon",
       {"base", "ceph", "netlink", "journal", "encryption", "supervisor", "csi", "csi/node", "csi/controller",
        "csi/heal"}},
      {"daemon/ctl", {"base", "ceph", "netlink", "host", "journal", "csi", "daemon"}},
  };
  return layers;
}

// The room a repository path lies in; "" for none of them (a library's or
// generated header).
std::string RoomOf(const std::string& path) {
  std::string best;
  for (const auto& [room, _] : Layers()) {
    if (path.rfind(room + "/", 0) == 0 && room.size() > best.size()) best = room;
  }
  return best;
}

struct Violation {
  std::string file, include, why;
};

std::vector<Violation> Violations() {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  const fs::path root = NBDK_SOURCE_DIR;
  std::vector<Violation> out;
  for (const auto& [room, allowed] : Layers()) {
    for (const auto& entry : fs::recursive_directory_iterator(root / room)) {
      std::string ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      std::string file = fs::relative(entry.path(), root).string();
      if (RoomOf(file) != room) continue;  // a sub-room's file, checked under its own rules
      std::ifstream in(entry.path());
      std::smatch m;
      for (std::string line; std::getline(in, line);) {
        if (!std::regex_search(line, m, include_line)) continue;
        std::string target = RoomOf(m[1]);
        if (target.empty() || target == room || allowed.count(target)) continue;
        out.push_back({file, m[1], "room " + room + " may not include room " + target});
      }
    }
  }
  return out;
}

TEST(RoomLayersTest, EveryIncludeRunsDownOrSideways) {
  std::vector<Violation> found = Violations();
  for (const Violation& v : found) ADD_FAILURE() << v.file << " includes " << v.include << ": " << v.why;
  EXPECT_TRUE(found.empty());
}

// The project's CMake libraries (nbdk_*) and the room each is defined in:
// a library may link only its own room's libraries and those of the rooms
// its row allows, as its sources may include only theirs.
struct Library {
  std::string room;
  std::vector<std::string> links;  // nbdk_* libraries only
};

std::map<std::string, Library> Libraries() {
  static const std::regex add(R"re(add_library\(\s*(nbdk_\w+))re");
  static const std::regex link(R"re(target_link_libraries\(\s*(nbdk_\w+)([^)]*)\))re");
  static const std::regex word(R"re(nbdk_\w+)re");
  const fs::path root = NBDK_SOURCE_DIR;
  std::map<std::string, Library> libs;
  std::vector<std::pair<std::string, std::string>> links;  // (library, its link list)
  for (const auto& [room, _] : Layers()) {
    for (const auto& entry : fs::recursive_directory_iterator(root / room)) {
      std::string name = entry.path().filename();
      if (!entry.is_regular_file() || (name != "CMakeLists.txt" && entry.path().extension() != ".cmake")) continue;
      std::string dir = fs::relative(entry.path().parent_path(), root).string();
      if (RoomOf(dir + "/") != room) continue;  // a sub-room's file, read under its own room
      std::ifstream in(entry.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (std::sregex_iterator m(text.begin(), text.end(), add), end; m != end; ++m) libs[(*m)[1]].room = room;
      for (std::sregex_iterator m(text.begin(), text.end(), link), end; m != end; ++m) {
        links.push_back({(*m)[1], (*m)[2]});
      }
    }
  }
  for (const auto& [lib, list] : links) {
    for (std::sregex_iterator m(list.begin(), list.end(), word), end; m != end; ++m)
      libs[lib].links.push_back(m->str());
  }
  return libs;
}

TEST(RoomLayersTest, EveryLibraryLinksDownOrSideways) {
  std::map<std::string, Library> libs = Libraries();
  ASSERT_GT(libs.size(), 10u) << "no CMake library found: the parser no longer reads the build files";
  for (const auto& [name, lib] : libs) {
    ASSERT_FALSE(lib.room.empty()) << name << " is linked but defined in no room";
    for (const std::string& dep : lib.links) {
      auto found = libs.find(dep);
      ASSERT_NE(found, libs.end()) << name << " links " << dep << ", defined in no room";
      const std::string& to = found->second.room;
      EXPECT_TRUE(to == lib.room || Layers().at(lib.room).count(to))
          << name << " (room " << lib.room << ") links " << dep << " (room " << to << ")";
    }
  }
}

TEST(RoomLayersTest, TheTableHasNoCycle) {
  // Depth-first over "may include": a room reached again on its own path is a cycle.
  std::map<std::string, int> mark;  // 1 on the path, 2 done
  std::function<bool(const std::string&)> acyclic = [&](const std::string& room) {
    if (mark[room] == 1) return false;
    if (mark[room] == 2) return true;
    mark[room] = 1;
    for (const std::string& below : Layers().at(room)) {
      if (!acyclic(below)) return false;
    }
    mark[room] = 2;
    return true;
  };
  for (const auto& [room, _] : Layers()) EXPECT_TRUE(acyclic(room)) << "cycle through " << room;
}

TEST(RoomLayersTest, TheTwoServicesKnowOnlyWhatTheyShare) {
  // The Node and the Controller meet in csi/ alone: neither uses the other's room.
  EXPECT_EQ(Layers().at("csi/controller").count("csi/node"), 0u);
  EXPECT_EQ(Layers().at("csi/node").count("csi/controller"), 0u);
}

TEST(RoomLayersTest, EveryRoomExists) {
  for (const auto& [room, _] : Layers()) {
    EXPECT_TRUE(fs::is_directory(fs::path(NBDK_SOURCE_DIR) / room)) << room;
  }
}

}  // namespace
