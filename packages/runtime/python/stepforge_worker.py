"""The embedded stack's Python worker: one long-lived process per project that runs Python user functions.

Started by packages/runtime/src/userfn/PythonWorker.ts as `python3 -u -B stepforge_worker.py FUNCTIONS_DIR`.
The protocol is JSON lines over stdio, one object per line:

  worker -> stack, once:  {"ready": true, "pid": 123, "python": "3.12.3"}
  stack -> worker:        {"id": 7, "module": "echo.py", "callable": null, "input": ..., "context": {...}, "kwargs": {...}}
  worker -> stack:        {"id": 7, "ok": true, "output": ..., "stdout": "...", "stderr": "..."}
                          {"id": 7, "ok": false, "error": {"kind": ..., "message": ..., "type": ..., "trace": [...]}, ...}

Calls are answered by id, in the order they finish: async functions run concurrently on one asyncio
loop, plain ones in threads. The process's own stdout carries only the protocol: file descriptor 1
is pointed at stderr, and print() output is captured per call and returned with its answer. The
worker exits when its stdin closes (the stack closed, or its process ended), abandoning calls in
flight, whose caller is gone.
"""
import asyncio
import json
import os
import platform
import sys
import threading

if sys.version_info < (3, 8):
    sys.stderr.write("stepforge: Python %s is too old to run user functions: Python 3.8 or later is needed\n" % platform.python_version())
    sys.exit(3)

# The directory of this script is sys.path[0]; the user's modules import from the functions folder,
# which comes after the standard library and site-packages, so that a user file named like a
# library module (json.py, asyncio.py) does not replace it.
sys.path.pop(0)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepforge_userfn  # noqa: E402

sys.path.pop(0)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: stepforge_worker.py FUNCTIONS_DIR\n")
        sys.exit(2)
    root = sys.argv[1]
    sys.path.append(os.path.realpath(root))
    # The protocol gets its own descriptor; 1 becomes stderr, so that output written below print()
    # (os.write(1, ...), a C library, a child process) cannot break a line of the protocol.
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    stepforge_userfn.install_capture(sys.__stderr__)
    runner = stepforge_userfn.FunctionRunner(root)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    def send(message):
        protocol.write(json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n")

    def send_raw(text):
        protocol.write(text.encode("ascii") + b"\n")

    async def serve(line):
        try:
            request = json.loads(line)
            call_id = request["id"]
        except (ValueError, KeyError, TypeError) as e:
            send({"id": None, "ok": False, "error": {"kind": "protocol", "message": "unreadable request: %s" % e, "trace": []}})
            return
        try:
            output, out, err = await runner.call(request, loop)
        except stepforge_userfn.UserFunctionError as e:
            send({"id": call_id, "ok": False, "error": e.to_json(), "stdout": getattr(e, "stdout", ""), "stderr": getattr(e, "stderr", "")})
            return
        except Exception as e:  # a fault of the worker itself: answer it rather than leave the call hanging
            send({"id": call_id, "ok": False, "error": {"kind": "worker", "message": stepforge_userfn.describe_exception(e), "trace": []}})
            return
        # The output is JSON text already: placed into the answer as it is, not parsed and written again.
        send_raw('{"id":%s,"ok":true,"output":%s,"stdout":%s,"stderr":%s}' % (
            json.dumps(call_id), output, json.dumps(out, ensure_ascii=True), json.dumps(err, ensure_ascii=True)))

    # The loop holds only weak references to its tasks: these keep each call alive until it answers.
    running = set()

    def start(line):
        task = loop.create_task(serve(line))
        running.add(task)
        task.add_done_callback(running.discard)

    def read():
        for line in sys.stdin.buffer:
            if line.strip():
                loop.call_soon_threadsafe(start, line)
        # stdin closed: nobody is left to answer.
        os._exit(0)

    threading.Thread(target=read, name="stepforge-reader", daemon=True).start()
    send({"ready": True, "pid": os.getpid(), "python": platform.python_version()})
    loop.run_forever()


if __name__ == "__main__":
    main()
