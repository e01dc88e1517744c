#pragma once
// Every file a command writes goes through here (reports, tables, HTML, exporter output,
// validations, profiles), so "write an output" means one thing everywhere:
//   * "-" is standard output;
//   * /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N write to our own descriptor N
//     (whatever it is: terminal, pipe, a file opened by the shell with > or >>);
//   * a symlink is written through: the link stays, the file it points to gets the text;
//   * a regular file (or a new one) is replaced atomically (temporary file next to it, fsync,
//     rename), keeping the old file's permission bits and owner, so a crash or Ctrl-C leaves
//     the old file or the complete new one, never half of one;
//   * anything else that exists (a device, a FIFO, a socket) is written in place, never
//     replaced: /dev/null stays /dev/null, a FIFO stays a FIFO;
//   * a write error (ENOSPC from /dev/full, EIO, ...) is an hb::Error, exit 1.
// check_output_path runs before a command's work, so a bad output path costs nothing.
#include <string>
#include <vector>

namespace hb::reports {

// True for "-" and for the names of descriptor 1 (/dev/stdout, /dev/fd/1, /proc/self/fd/1): a
// command that prints a human summary on stdout sends it to stderr instead when this is true.
bool is_stdout_path(const std::string& path);

// Refuses (hb::Error, exit 2, naming `option` and the fix) an output path that cannot be
// written: its folder is missing or not writable, it is a folder, an existing file is not
// writable, its name leaves no room for the temporary file's (check_name_room), it is the same
// file as one of `inputs` (device and inode, through symlinks), which writing would destroy, or
// it lies inside an input that is a folder (a --sysfs-root tree). Empty paths and "-" pass;
// empty inputs are skipped.
void check_output_path(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs = {});

// Refuses (hb::Error, exit 2, naming `option` and the longest name that fits) a path whose file
// name, `extra` characters longer, would pass its folder's file-name limit (NAME_MAX, 255 on
// most file systems): a file named after it (`what`: the temporary file of the atomic replace,
// a run's journal) could then not be created, and the command would fail only after its work.
void check_name_room(const std::string& option, const std::string& path, size_t extra,
                     const std::string& what);

// Refuses two outputs of one command that are the same file, or both standard output (their
// texts would overwrite or interleave each other). `outputs` pairs an option with its path;
// empty paths are skipped.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// Writes `text` to `path` as described above; throws hb::Error (kExitFailure) on I/O failure.
void write_output(const std::string& path, const std::string& text);

// Writes the outputs of one command (path, text) as one: the in-place targets (standard output,
// devices, FIFOs) first, then every regular file staged before any is replaced, so a write that
// fails (/dev/full, a full disk) leaves no file changed beside it: all or none of them.
void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace hb::reports
