"""What every examples/onnx script does: load a zoo model with sonnx, run it
on a sample input, print what it found, and (--check) compare with
onnxruntime.

    python examples/onnx/resnet18.py --model resnet18-v1-7.onnx --check
    python examples/onnx/gpt2.py                 # no file: generate one (random weights)

--model takes a real ONNX model-zoo file; the inputs are built from the
file's declared inputs (names, dtypes, fixed sizes), so the zoo's files and
the locally generated ones (zoo_models.py, the same architectures with
random weights) both run. Images come from scikit-learn's sample images
(or --image); the transformers get a sentence split into words and hashed
into the vocabulary (a stand-in for each model's real tokenizer, which is
not installed here).
"""
from __future__ import annotations

import os
import sys
import time
import zlib

import numpy as np

from singa import sonnx, tensor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import example_cli  # noqa: E402
import zoo_models  # noqa: E402

# The tolerance of tests/python/test_zoo.py: float32 kernels that sum in a
# different order than onnxruntime's differ by a few ulps of the outputs.
RTOL, ATOL = 1e-4, 1e-5
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
VOC = ["aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
       "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa",
       "train", "tvmonitor"]
YOLO_ANCHORS = [(1.08, 1.19), (3.42, 4.41), (6.63, 11.38), (9.42, 5.11), (16.62, 10.52)]
QUESTION = "where is the great wall"
CONTEXT = "the great wall of china stretches across the historical northern borders of china"
SENTENCE = "this film was a delight from the first scene to the last"
PROMPT = "the quick brown fox jumps over the lazy"


def image(path=None, which="china.jpg"):
    """An RGB uint8 image [H, W, 3]: `path`, else scikit-learn's sample."""
    if path:
        from PIL import Image
        return np.asarray(Image.open(path).convert("RGB"))
    from sklearn.datasets import load_sample_image
    return load_sample_image(which)


def resize(img, h, w):
    """Center-crops to the target aspect ratio, then resizes (bilinear)."""
    from PIL import Image
    ih, iw = img.shape[:2]
    if ih * w > iw * h:
        ch, cw = iw * h // w, iw
    else:
        ch, cw = ih, ih * w // h
    top, left = (ih - ch) // 2, (iw - cw) // 2
    crop = Image.fromarray(img[top:top + ch, left:left + cw])
    return np.asarray(crop.resize((w, h), Image.BILINEAR))


def image_input(kind, img, h, w, channels):
    """[1, C, H, W] float32 in the range the zoo's model of `kind` expects."""
    x = resize(img, h, w).astype(np.float32)
    if channels == 1:  # ITU-R 601 luma, as FER+'s grey faces
        x = (x @ np.array([0.299, 0.587, 0.114], np.float32))[..., None]
    if kind == "classify":
        x = (x / 255.0 - IMAGENET_MEAN) / IMAGENET_STD
    elif kind == "embed":
        x = (x - 127.5) / 128.0
    # detect (Tiny-YOLOv2) and emotion (FER+) take pixel values 0..255
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)


def words_to_ids(words, vocab):
    """A stand-in tokenizer: each word hashed to an id above the special ones."""
    first = 1000 if vocab > 2000 else 5
    return [first + zlib.crc32(w.encode()) % (vocab - first) for w in words]


def _vocab(rep, default=30522):
    """The vocabulary size: rows of the largest 2-D initializer that is an
    embedding table (the one with the most rows), else `default`."""
    rows = [t.shape[0] for t in rep.params.values() if len(t.shape) == 2]
    return max(rows) if rows else default


def _seq_len(info, default):
    return info.dims[-1] if info.dims and info.dims[-1] > 0 else default


def text_inputs(spec, rep, batch):
    """Feeds for a transformer's declared inputs, by their names' roles;
    returns (feeds, the words at each position)."""
    vocab = _vocab(rep)
    cls, sep = (101, 102) if vocab > 2000 else (1, 2)
    if spec.kind == "qa":
        q, c = QUESTION.split(), CONTEXT.split()
        words = ["[CLS]"] + q + ["[SEP]"] + c + ["[SEP]"]
        ids = [cls] + words_to_ids(q, vocab) + [sep] + words_to_ids(c, vocab) + [sep]
        segment = [0] * (len(q) + 2) + [1] * (len(c) + 1)
    elif spec.kind == "sentiment":
        words = ["<s>"] + SENTENCE.split() + ["</s>"]
        ids, segment = [0] + words_to_ids(SENTENCE.split(), vocab) + [2], None
    else:
        words = PROMPT.split()
        ids, segment = words_to_ids(words, vocab), None
    feeds = {}
    for info in rep.inputs:
        n = _seq_len(info, len(ids))
        pad = n - len(ids)
        if pad < 0:
            raise ValueError(f"{info.name}: the sample text needs {len(ids)} tokens, the model "
                             f"takes {n}")
        name = info.name.lower()
        if "mask" in name:
            row = [1] * len(ids) + [0] * pad
        elif "segment" in name or "type" in name:
            row = (segment or [0] * len(ids)) + [0] * pad
        elif "unique" in name:  # BERT-Squad's example ids
            feeds[info.name] = np.arange(batch, dtype=np.dtype(info.dtype.name))
            continue
        else:
            row = ids + [0 if vocab > 2000 else 1] * pad
        # GPT-2's zoo file takes [batch, 1, sequence]: leading ones
        shape = [batch] + [1] * (max(len(info.dims), 2) - 2) + [n]
        feeds[info.name] = np.broadcast_to(np.array(row), shape).astype(info.dtype.name)
    return feeds, words


def vision_inputs(spec, rep, batch, args):
    (info,) = rep.inputs
    channels = info.dims[1] if len(info.dims) == 4 and info.dims[1] > 0 else 3
    cfg = spec.config(args.size)
    h = info.dims[2] if len(info.dims) == 4 and info.dims[2] > 0 else cfg["image"]
    w = info.dims[3] if len(info.dims) == 4 and info.dims[3] > 0 else cfg["image"]
    x = image_input(spec.kind, image(args.image), h, w, channels)
    return {info.name: np.repeat(x, batch, axis=0)}


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _probabilities(scores):
    already = scores.min() >= 0 and abs(scores.sum(-1) - 1).max() < 1e-3
    return scores if already else softmax(scores)


def report_classify(outs, _ctx):
    p = _probabilities(outs[0].reshape(outs[0].shape[0], -1))[0]
    top = np.argsort(-p)[:5]
    print("top-5 classes (ImageNet index: probability): " +
          ", ".join(f"{i}: {p[i]:.3f}" for i in top))


def report_emotion(outs, _ctx):
    p = _probabilities(outs[0].reshape(outs[0].shape[0], -1))[0]
    names = zoo_models.EmotionFerPlus.EMOTIONS
    print("emotions: " + ", ".join(f"{names[i]} {p[i]:.3f}" for i in np.argsort(-p)[:3]))


def report_detect(outs, _ctx):
    """Decodes YOLOv2's [N, 5 x 25, H, W] grid; prints the 3 best boxes."""
    y = outs[0][0]
    na = len(YOLO_ANCHORS)
    gh, gw = y.shape[1:]
    y = y.reshape(na, 5 + len(VOC), gh, gw)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    conf = sig(y[:, 4])[:, None] * softmax(y[:, 5:], axis=1)  # [anchor, class, H, W]
    found = []
    for a, c, r, col in zip(*np.unravel_index(np.argsort(-conf, axis=None)[:3], conf.shape)):
        cx, cy = (col + sig(y[a, 0, r, col])) / gw, (r + sig(y[a, 1, r, col])) / gh
        bw = YOLO_ANCHORS[a][0] * np.exp(y[a, 2, r, col]) / gw
        bh = YOLO_ANCHORS[a][1] * np.exp(y[a, 3, r, col]) / gh
        found.append(f"{VOC[c]} {conf[a, c, r, col]:.3f} at (x {cx:.2f}, y {cy:.2f}, "
                     f"w {bw:.2f}, h {bh:.2f})")
    print(f"grid {gh}x{gw}, best boxes (relative to the image): " + "; ".join(found))


def report_embed(outs, ctx):
    """Cosine similarity of the face embedding with its mirror image's and
    with another picture's (trained weights give high / low values)."""
    rep, feeds = ctx["rep"], ctx["feeds"]
    (name, x), = feeds.items()
    other = image_input("embed", image(which="flower.jpg"), x.shape[2], x.shape[3], x.shape[1])
    emb = [outs[0][:1]] + [tensor.to_numpy(rep.run({name: v})[0])[:1]
                           for v in (x[:1, :, :, ::-1].copy(), other)]
    emb = [e.ravel() / np.linalg.norm(e) for e in emb]
    print(f"embedding of {emb[0].size} values; cosine with the mirrored face "
          f"{emb[0] @ emb[1]:.3f}, with another image {emb[0] @ emb[2]:.3f}")


def report_qa(outs, ctx):
    names = [o.name for o in ctx["rep"].outputs]
    pick = lambda key, i: next((o for n, o in zip(names, outs) if key in n.lower()), outs[i])  # noqa: E731
    start, end = pick("start", 0)[0].ravel(), pick("end", 1)[0].ravel()
    words = ctx["words"]
    n = len(words)
    best = max(((start[i] + end[j], i, j) for i in range(n) for j in range(i, min(n, i + 30))))
    print(f"answer span: tokens {best[1]}..{best[2]}: \"{' '.join(words[best[1]:best[2] + 1])}\"")


def report_sentiment(outs, _ctx):
    p = softmax(outs[0].reshape(outs[0].shape[0], -1))[0]
    print("sentiment: " + ", ".join(f"{k} {v:.3f}" for k, v in zip(["negative", "positive"], p)))


def report_lm(outs, ctx):
    logits = outs[0]
    last = logits.reshape(-1, logits.shape[-2], logits.shape[-1])[0, len(ctx["words"]) - 1]
    p = softmax(last)
    top = np.argsort(-p)[:5]
    print(f"next token after \"{PROMPT}\" (token id: probability): " +
          ", ".join(f"{i}: {p[i]:.3f}" for i in top))


REPORTS = {"classify": report_classify, "emotion": report_emotion, "detect": report_detect,
           "embed": report_embed, "qa": report_qa, "sentiment": report_sentiment, "lm": report_lm}


def check(path, feeds, outs):
    """Compares with onnxruntime; True when every output matches."""
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    ok = True
    for o, w, name in zip(outs, want, [v.name for v in sess.get_outputs()]):
        same = o.shape == w.shape and np.allclose(o, w, rtol=RTOL, atol=ATOL)
        diff = float(np.abs(o - w).max()) if o.shape == w.shape else float("nan")
        print(f"{name}: {'matches' if same else 'DIFFERS from'} onnxruntime "
              f"(max |diff| {diff:.2e}, rtol {RTOL}, atol {ATOL})")
        ok &= same
    return ok


def main(name, argv=None):
    """The script of zoo model `name`: its exit status."""
    return example_cli.run(lambda: _main(name, argv))


def _main(name, argv):
    spec = zoo_models.ZOO[name]
    ap = example_cli.parser(f"{spec.title} with singa's ONNX import.\n\n" + __doc__)
    ap.add_argument("--model", help="an ONNX file (e.g. from the ONNX model zoo); default: "
                    "export the architecture locally with random weights")
    ap.add_argument("--size", choices=["full", "small"], default="full",
                    help="the generated model's size (small: a narrow, shallow variant)")
    ap.add_argument("--opset", type=int, default=zoo_models.NEWEST_OPSET,
                    help="the generated model's opset")
    ap.add_argument("--batch", type=int, default=1, help="how many inputs one run takes")
    if not spec.is_text:
        ap.add_argument("--image", help="an image file (default: scikit-learn's china.jpg)")
    ap.add_argument("--check", action="store_true", help="compare the outputs with onnxruntime")
    args = ap.parse_args(argv)

    path = args.model or zoo_models.export(name, args.opset, args.size)
    t0 = time.perf_counter()
    rep = sonnx.prepare(path)
    t1 = time.perf_counter()
    words = None
    if spec.is_text:
        feeds, words = text_inputs(spec, rep, args.batch)
    else:
        feeds = vision_inputs(spec, rep, args.batch, args)
    t2 = time.perf_counter()
    outs = [tensor.to_numpy(t) for t in rep.run(feeds)]
    t3 = time.perf_counter()
    print(f"{spec.title}: {path} (opset {rep.opset()}), prepared in {t1 - t0:.2f} s, ran in "
          f"{(t3 - t2) * 1e3:.1f} ms")
    print("inputs " + ", ".join(f"{k} {list(v.shape)}" for k, v in feeds.items()) + "; outputs " +
          ", ".join(f"{o.name} {list(v.shape)}" for o, v in zip(rep.outputs, outs)))
    REPORTS[spec.kind](outs, {"rep": rep, "feeds": feeds, "words": words})
    if args.check and not check(path, feeds, outs):
        return 1
    return 0
