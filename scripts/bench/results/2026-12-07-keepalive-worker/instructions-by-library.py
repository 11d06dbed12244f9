# instructions-by-library.py LABEL...: user instructions per kept-alive request by library, from the
# callgrind files instructions-per-request.sh leaves (CG_DIR, default /tmp: cg-LABEL-200.out, cg-LABEL-1200.out).
import os, re, subprocess, sys, collections
def load(p):
    d=collections.Counter()
    out=subprocess.run(["callgrind_annotate","--threshold=100",p],capture_output=True,text=True).stdout
    for l in out.split("\n"):
        m=re.match(r"^\s*([0-9,]+)\s+\(\s*[0-9.]+%\)\s+(.*)$", l)
        if not m or "PROGRAM TOTALS" in l: continue
        ir=int(m.group(1).replace(",","")); obj=re.search(r"\[([^\]]*)\]\s*$", m.group(2))
        o=obj.group(1).split("/")[-1] if obj else "?"
        if o.startswith("libc.so"):
            fn=m.group(2)
            o="libc:"+("malloc/free" if re.search(r"malloc|free|tcache",fn) else "mem*/str*" if re.search(r"mem|str",fn) else "other")
        d[o]+=ir
    return d
for label in sys.argv[1:]:
    a=load(os.path.join(os.environ.get("CG_DIR", "/tmp"), f"cg-{label}-200.out")); b=load(os.path.join(os.environ.get("CG_DIR", "/tmp"), f"cg-{label}-1200.out"))
    print("==", label, round(sum((b-a).values())/1000))
    for k,v in sorted(((k,(b[k]-a[k])/1000) for k in b), key=lambda x:-x[1])[:12]: print(f"   {v:8.0f} {k}")
