#include "report/gnuplot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "report/report_format.h"

extern char** environ;

namespace ks::report_page {
namespace {

namespace fs = std::filesystem;

// The gnuplot program on PATH, or empty.
std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream entries(path ? path : "");
  for (std::string entry; std::getline(entries, entry, ':');) {
    const fs::path candidate = fs::path(entry.empty() ? "." : entry) / "gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// Runs `gnuplot plots.gp` in `folder`, its stdout and stderr into gnuplot.log; returns its exit code
// (127 when it could not start, 128 + N when signal N ended it).
int run_gnuplot(const std::string& gnuplot, const fs::path& folder) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = (folder / "gnuplot.log").string();
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np(&actions, folder.c_str());
  std::string program = gnuplot, script = "plots.gp";
  char* argv[] = {program.data(), script.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return 127;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// Inline in HTML: no XML prolog, and ids (gnuplot names its markers and clip paths alike in every
// file) made unique to this plot.
std::string inline_form(std::string svg, const std::string& name) {
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find("?>") + 2);
  const std::string prefix = slug(name) + "-";
  for (const char quote : {'\'', '"'}) {
    replace_all(svg, fmt::format("id={}", quote), fmt::format("id={}{}", quote, prefix));
    replace_all(svg, fmt::format("href={}#", quote), fmt::format("href={}#{}", quote, prefix));
  }
  replace_all(svg, "url(#", "url(#" + prefix);
  return svg;
}

}  // namespace

std::string gnuplot_string(std::string_view text) {
  static constexpr Replacements kDoubledQuotes{{'\'', "''"}};
  return "'" + kDoubledQuotes(text) + "'";
}

std::string gnuplot_number(double value) { return fmt::format("{:.9g}", value); }

std::string gnuplot_header(int width, int height) {
  std::string out =
      "# The plots of this report, drawn by kernelsweep: run `gnuplot plots.gp` in this folder to draw them\n"
      "# again.\n";
  out += "set encoding utf8\n";
  out += fmt::format("set terminal svg size {},{} dynamic noenhanced font 'sans,12' background rgb 'white'\n", width,
                     height);
  return out;
}

void begin_plot(const std::string& name, const std::string& title, std::string& out) {
  out += fmt::format("reset\nset output {}\nset title {}\n", gnuplot_string(name + ".svg"), gnuplot_string(title));
}

DrawnPlots draw_with_gnuplot(const fs::path& folder, const std::string& script, const std::vector<std::string>& names) {
  DrawnPlots drawn;
  fs::create_directories(folder);
  for (const auto& name : names) fs::remove(folder / (name + ".svg"));  // none left from an earlier report
  std::ofstream(folder / "plots.gp") << script;

  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    drawn.why_not =
        "gnuplot is not installed (not on PATH), so this report has no plots; install it "
        "(Debian: apt-get install gnuplot-nox) and run the report again";
    return drawn;
  }
  const int code = run_gnuplot(gnuplot, folder);
  drawn.gnuplot_failed = code != 0;
  if (code != 0)
    drawn.why_not = fmt::format("gnuplot failed (exit code {}): {} says why; the plots it did not draw are left out",
                                code, (folder / "gnuplot.log").string());
  for (const auto& name : names) {
    const fs::path svg = folder / (name + ".svg");
    if (fs::exists(svg) && fs::file_size(svg) > 0) drawn.inline_svg[name] = inline_form(read_text(svg), name);
  }
  return drawn;
}

}  // namespace ks::report_page
