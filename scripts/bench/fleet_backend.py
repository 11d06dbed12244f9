"""The fleet benchmark's upstream: plain HTTP/1.1 on loopback that answers every request after a
fixed delay, standing in for the network round trips and server time of a real fleet (nginx
terminates TLS in front of it). `fleet_backend.py PORT DELAY_MS` runs until killed; a request whose
target has `delay_ms=N` in its query is answered after N ms instead (the fan-out workload's 200 ms).

One asyncio loop: each connection is a coroutine and each delay a timer, so a thousand requests
in flight cost a thousand timers, not threads; the requests of one connection are answered in
order (nginx keeps up to 1,024 idle upstream connections, `keepalive` in run_all.sh, and opens
more when more requests are in flight). The accept queue holds 4,096 (the kernel's somaxconn caps
it), so a thousand connections opened at once are not refused or retried."""
import asyncio
import re
import sys


async def handle(reader, writer, delay):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if not head:
                break
            asked = re.search(rb"[?&]delay_ms=(\d+)", head.split(b"\r\n", 1)[0])
            await asyncio.sleep(int(asked.group(1)) / 1000.0 if asked else delay)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    port, delay = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    server = await asyncio.start_server(lambda r, w: handle(r, w, delay), "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


asyncio.run(main())
