"""Ctrl-C (SIGINT) stops a long call cleanly and raises KeyboardInterrupt.

Each test makes a call that would run for a long time, sends SIGINT once the
call has started and checks the call stopped instead of finishing: the index
directory was never committed, or the worker thread saw the interrupt."""
import os
import signal
import threading
import time

import verity


def _interrupt_soon(delay=0.5):
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_stops_build_index(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    words = " ".join(f"word{i}" for i in range(100))
    corpus.write_text("".join(f'{{"_id": "d{i}", "text": "{words} w{i}"}}\n' for i in range(40000)))
    out = tmp_path / "idx"
    timer = _interrupt_soon(0.2)
    try:
        verity.build_index(str(corpus), str(out), threads=1)
        raise AssertionError("build_index finished despite SIGINT")
    except KeyboardInterrupt:
        pass
    finally:
        timer.cancel()
    assert not out.exists()  # nothing half-written
    # The library is usable again afterwards.
    small = tmp_path / "small.jsonl"
    small.write_text('{"_id": "a", "text": "cats"}\n')
    assert verity.build_index(str(small), str(tmp_path / "ok"))["docs"] == 1


def test_ctrl_c_stops_encode_off_the_main_thread(use_lite):
    texts = [f"sentence number {i} about rivers, vaccines and household pets" for i in range(20000)]
    outcome = []
    done = threading.Event()

    def work():
        try:
            use_lite.encode(texts, batch_size=16)
            outcome.append("finished")
        except KeyboardInterrupt:
            outcome.append("interrupted")
        finally:
            done.set()

    worker = threading.Thread(target=work)
    worker.start()
    timer = _interrupt_soon()
    main_saw_it = False
    # Sleep, not Thread.join: a join interrupted by KeyboardInterrupt leaves
    # is_alive() wrong on CPython 3.11.
    while not done.is_set():
        try:
            time.sleep(0.05)
        except KeyboardInterrupt:  # Python's own handler runs on the main thread
            main_saw_it = True
    worker.join()
    timer.cancel()
    assert outcome == ["interrupted"]
    assert main_saw_it
