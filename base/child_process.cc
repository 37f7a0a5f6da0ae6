#include "base/child_process.h"

#include <csignal>
#include <utility>

namespace nbdk {

std::string_view OutputStreamName(OutputStream stream) { return stream == OutputStream::kStdout ? "stdout" : "stderr"; }

namespace {
constexpr size_t kReadChunk = 64 * 1024;

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}
}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(EventLoop& loop, SpawnOptions options, LineCallback on_line,
                                                          ExitCallback on_exit) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Status::InvalidArgument("spawn: argv is empty");
  }
  if (options.max_line_bytes == 0) return Status::InvalidArgument("spawn: max_line_bytes is 0");
  std::unique_ptr<ChildProcess> child(
      new ChildProcess(loop, std::move(options), std::move(on_line), std::move(on_exit)));
  Status started = child->Start();
  if (!started.ok()) {
    // Spawned but its output cannot be read: do not leave it running.
    if (child->pid_ > 0) uv_process_kill(child->process_.handle(), SIGKILL);
    return started;
  }
  return child;
}

ChildProcess::ChildProcess(EventLoop& loop, SpawnOptions options, LineCallback on_line, ExitCallback on_exit)
    : loop_(loop), options_(std::move(options)), on_line_(std::move(on_line)), on_exit_(std::move(on_exit)) {}

ChildProcess::~ChildProcess() {
  *alive_ = false;
  if (options_.kill_signal_on_destroy != 0 && pid_ > 0 && !exit_) {
    uv_process_kill(process_.handle(), options_.kill_signal_on_destroy);
  }
  // Member destructors close the pipes and the process handle.
}

Status ChildProcess::Start() {
  uv_loop_t* uv = loop_.uv();
  for (auto* pipe : {&stdout_, &stderr_}) {
    if (int rc = uv_pipe_init(uv, pipe->handle(), 0); rc != 0) return Status::FromErrno(-rc, "uv_pipe_init");
    pipe->MarkInitialized();
    pipe->state().owner = this;
    pipe->state().buffer.resize(kReadChunk);
  }
  stdout_.state().stream = OutputStream::kStdout;
  stderr_.state().stream = OutputStream::kStderr;

  uv_stdio_container_t stdio[3];
  if (options_.stdin_data) {
    // A child that exits without reading its stdin would otherwise kill the
    // whole daemon with SIGPIPE on our write; the write fails with EPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    if (int rc = uv_pipe_init(uv, stdin_.handle(), 0); rc != 0) return Status::FromErrno(-rc, "uv_pipe_init");
    stdin_.MarkInitialized();
    stdio[0].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_READABLE_PIPE);
    stdio[0].data.stream = reinterpret_cast<uv_stream_t*>(stdin_.handle());
  } else {
    stdio[0].flags = UV_IGNORE;  // libuv points fd 0 at /dev/null
  }
  stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(stdout_.handle());
  stdio[2].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[2].data.stream = reinterpret_cast<uv_stream_t*>(stderr_.handle());

  std::vector<std::string> argv = options_.argv;
  std::vector<std::string> env = options_.env;
  std::vector<char*> c_argv = CStrings(argv);
  std::vector<char*> c_env = CStrings(env);

  uv_process_options_t opts{};
  opts.file = c_argv[0];
  opts.args = c_argv.data();
  opts.env = env.empty() ? nullptr : c_env.data();
  opts.cwd = options_.cwd.empty() ? nullptr : options_.cwd.c_str();
  opts.stdio_count = 3;
  opts.stdio = stdio;
  opts.flags = options_.new_session ? UV_PROCESS_DETACHED : 0;
  opts.exit_cb = [](uv_process_t* p, int64_t exit_status, int term_signal) {
    OwnedHandle<uv_process_t, ProcessState>::BoxOf(p)->state.owner->OnExit(exit_status, term_signal);
  };
  process_.state().owner = this;
  int rc = uv_spawn(uv, process_.handle(), &opts);
  // uv_spawn initialises the handle even when it fails: it must be closed.
  process_.MarkInitialized();
  if (rc != 0) return Status::FromErrno(-rc, "spawn " + options_.argv[0]);
  pid_ = process_.handle()->pid;

  NBDK_RETURN_IF_ERROR(StartReading(stdout_));
  NBDK_RETURN_IF_ERROR(StartReading(stderr_));
  if (options_.stdin_data) {
    auto& st = stdin_.state();
    st.data = std::move(*options_.stdin_data);
    st.req.data = this;
    uv_buf_t buf = uv_buf_init(st.data.data(), static_cast<unsigned>(st.data.size()));
    rc = uv_write(&st.req, reinterpret_cast<uv_stream_t*>(stdin_.handle()), &buf, 1, [](uv_write_t* req, int status) {
      // Closing the pipe cancels the write: the owner may be gone.
      if (status == UV_ECANCELED) return;
      static_cast<ChildProcess*>(req->data)->stdin_.Close();
    });
    if (rc != 0) stdin_.Close();  // the child then reads end-of-file
  }
  return Status::Ok();
}

Status ChildProcess::StartReading(OwnedHandle<uv_pipe_t, PipeState>& pipe) {
  int rc = uv_read_start(
      reinterpret_cast<uv_stream_t*>(pipe.handle()),
      [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto& st = OwnedHandle<uv_pipe_t, PipeState>::BoxOf(reinterpret_cast<uv_pipe_t*>(h))->state;
        *buf = uv_buf_init(st.buffer.data(), static_cast<unsigned>(st.buffer.size()));
      },
      [](uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
        auto& st = OwnedHandle<uv_pipe_t, PipeState>::BoxOf(reinterpret_cast<uv_pipe_t*>(s))->state;
        st.owner->OnRead(s, st, nread, buf);
      });
  if (rc != 0) return Status::FromErrno(-rc, "read output of " + options_.argv[0]);
  return Status::Ok();
}

void ChildProcess::OnRead(uv_stream_t* stream, PipeState& pipe, ssize_t nread, const uv_buf_t* buf) {
  if (nread == 0) return;
  if (nread > 0) {
    pipe.partial.append(buf->base, static_cast<size_t>(nread));
    EmitLines(pipe, false);
    return;
  }
  // End-of-file or a read error: either way this pipe is finished.
  pipe.eof = true;
  uv_read_stop(stream);
  if (!EmitLines(pipe, true)) return;
  MaybeDeliverExit();
}

bool ChildProcess::EmitLines(PipeState& pipe, bool flush) {
  // Copies: a callback may destroy this object (and with it `pipe`).
  LineCallback cb = on_line_;
  std::shared_ptr<bool> alive = alive_;
  const OutputStream stream = pipe.stream;
  const size_t max = options_.max_line_bytes;
  while (!pipe.partial.empty()) {
    size_t nl = pipe.partial.find('\n');
    size_t take;
    size_t skip;
    if (nl != std::string::npos && nl <= max) {
      take = nl;
      skip = 1;
    } else if (pipe.partial.size() >= max) {
      take = max;
      skip = 0;
    } else if (flush) {
      take = pipe.partial.size();
      skip = 0;
    } else {
      break;
    }
    std::string line = pipe.partial.substr(0, take);
    pipe.partial.erase(0, take + skip);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (cb) {
      cb(stream, line);
      if (!*alive) return false;
    }
  }
  return true;
}

void ChildProcess::OnExit(int64_t exit_status, int term_signal) {
  exit_ = ExitInfo{exit_status, term_signal};
  if (stdout_.state().eof && stderr_.state().eof) {
    DeliverExit();
    return;
  }
  drain_timer_ = std::make_unique<Timer>(loop_);
  drain_timer_->Start(options_.exit_drain_ms, 0, [this] {
    for (auto* pipe : {&stdout_, &stderr_}) {
      if (!pipe->valid() || pipe->state().eof) continue;
      pipe->state().eof = true;
      if (!EmitLines(pipe->state(), true)) return;
    }
    DeliverExit();
  });
}

void ChildProcess::MaybeDeliverExit() {
  if (!delivered_ && exit_ && stdout_.state().eof && stderr_.state().eof) DeliverExit();
}

void ChildProcess::DeliverExit() {
  if (delivered_) return;
  delivered_ = true;
  drain_timer_.reset();
  stdout_.Close();
  stderr_.Close();
  stdin_.Close();
  ExitCallback cb = std::move(on_exit_);
  ExitInfo info = *exit_;
  if (cb) cb(info);  // may destroy this object: nothing after this line
}

Status ChildProcess::Kill(int signum) {
  if (exit_) return Status::FailedPrecondition("process " + std::to_string(pid_) + " has already exited");
  int rc = uv_process_kill(process_.handle(), signum);
  if (rc != 0) return Status::FromErrno(-rc, "kill process " + std::to_string(pid_));
  return Status::Ok();
}

}  // namespace nbdk
