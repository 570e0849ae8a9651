"""A far-away dealer for tests: relays one TCP connection, everything held back for a delay each way.

``python delay_proxy.py DELAY_MS DEALER_HOST DEALER_PORT -- COMMAND...`` listens on a free
loopback port, runs COMMAND with ``{proxy_port}`` replaced by it, relays the one connection
COMMAND makes to the dealer, each piece forwarded ``DELAY_MS`` after it arrived (in order, not
queued behind the one before: a link's latency, not its bandwidth), and exits with COMMAND's
status. The dealer's clock then runs twice the delay longer for each reply than the bot sees.
"""

from __future__ import annotations

import queue
import signal
import socket
import subprocess
import sys
import threading
import time


def _relay(source: socket.socket, target: socket.socket, delay_s: float) -> None:
    """Forward what ``source`` sends to ``target``, each chunk ``delay_s`` after it arrived."""
    held: queue.Queue[tuple[float, bytes]] = queue.Queue()

    def send() -> None:
        while True:
            due, data = held.get()
            if not data:
                target.shutdown(socket.SHUT_WR)
                return
            time.sleep(max(0.0, due - time.monotonic()))
            target.sendall(data)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        while data := source.recv(65536):
            held.put((time.monotonic() + delay_s, data))
    except OSError:
        pass
    held.put((0.0, b""))
    sender.join()


def main(argv: list[str]) -> int:
    delay_s, host, port = float(argv[0]) / 1000, argv[1], int(argv[2])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the dealer's stop: the bot goes too
    listener = socket.create_server(("127.0.0.1", 0))
    proxy_port = str(listener.getsockname()[1])
    bot = subprocess.Popen([part.replace("{proxy_port}", proxy_port) for part in argv[argv.index("--") + 1 :]])
    try:
        listener.settimeout(0.1)
        while True:  # until the bot connects, or exits without connecting
            try:
                near, _ = listener.accept()
                break
            except TimeoutError:
                if bot.poll() is not None:
                    return bot.returncode
        far = socket.create_connection((host, port))
        for sock in (near, far):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for pair in ((near, far, delay_s), (far, near, delay_s)):
            threading.Thread(target=_relay, args=pair, daemon=True).start()
        return bot.wait()
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
