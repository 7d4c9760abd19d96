"""Train a CNN (conv-relu-pool x2, linear x2) on scikit-learn's digits with
singa's Python API, in graph mode (default) or eager mode, and save a
loss/accuracy plot.

    .venv/bin/python examples/python/train_digits.py                 # graph mode
    .venv/bin/python examples/python/train_digits.py --eager --epochs 5
"""
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tqdm import tqdm  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_cli  # noqa: E402

from singa import autograd, data, device, layer, model, opt, tensor  # noqa: E402


class CNN(model.Model):

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = layer.Conv2d(16, 3, padding=1)
        self.pool1 = layer.MaxPool2d(2)
        self.conv2 = layer.Conv2d(32, 3, padding=1)
        self.pool2 = layer.MaxPool2d(2)
        self.flatten = layer.Flatten()
        self.fc1 = layer.Linear(64)
        self.fc2 = layer.Linear(num_classes)

    def forward(self, x):
        y = self.pool1(autograd.relu(self.conv1(x)))
        y = self.pool2(autograd.relu(self.conv2(y)))
        return self.fc2(autograd.relu(self.fc1(self.flatten(y))))

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def load_data(seed=0):
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # [N, 1, 8, 8]
    y = digits.target.astype(np.int32)
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


def evaluate(m, x, y, batch):
    m.eval()
    correct = 0
    for xb, yb in data.batches(x, y, batch_size=batch):
        out = m(tensor.Tensor(data=xb, requires_grad=False))
        correct += int((tensor.to_numpy(out).argmax(1) == yb).sum())
    m.train()
    return correct / len(x)


def main():
    p = example_cli.parser(__doc__)
    p.add_argument("--epochs", type=int, default=12, help="passes over the training set")
    p.add_argument("--batch", type=int, default=64, help="batch size")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate")
    p.add_argument("--eager", action="store_true", help="run eagerly instead of graph mode")
    p.add_argument("--plot", default="out/train_digits.png",
                   help="where the loss and accuracy plot is saved")
    p.add_argument("--seed", type=int, default=0, help="seed of the data split and the weights")
    args = p.parse_args()

    dev = device.get_default_device()
    dev.SetRandSeed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    m = CNN()
    m.set_optimizer(opt.SGD(lr=args.lr, momentum=0.9, weight_decay=1e-5))
    tx = tensor.Tensor((args.batch, 1, 8, 8), dev, requires_grad=False)
    ty = tensor.Tensor((args.batch,), dev, tensor.int32, requires_grad=False)
    m.compile([tx], is_train=True, use_graph=not args.eager, sequential=False)

    # Full batches: graph mode replays one shape.
    train_batches = data.batches(x_train, y_train, batch_size=args.batch, shuffle=True,
                                 drop_last=True, seed=args.seed)
    steps = len(train_batches)
    history = {"loss": [], "train_acc": [], "test_acc": []}
    start = time.time()
    for epoch in range(args.epochs):
        total_loss, correct = 0.0, 0
        bar = tqdm(train_batches, desc=f"epoch {epoch + 1}/{args.epochs}", leave=False)
        for s, (xb, yb) in enumerate(bar):
            tx.copy_from_numpy(xb)
            ty.copy_from_numpy(yb)
            out, loss = m(tx, ty)
            total_loss += float(tensor.to_numpy(loss)[0])
            correct += int((tensor.to_numpy(out).argmax(1) == yb).sum())
            bar.set_postfix(loss=f"{total_loss / (s + 1):.4f}", refresh=False)
        history["loss"].append(total_loss / steps)
        history["train_acc"].append(correct / (steps * args.batch))
        history["test_acc"].append(evaluate(m, x_test, y_test, args.batch))
        print(f"epoch {epoch + 1:2d}  loss {history['loss'][-1]:.4f}  "
              f"train acc {history['train_acc'][-1]:.4f}  test acc {history['test_acc'][-1]:.4f}")
    mode = "eager" if args.eager else "graph"
    print(f"{mode} mode: {time.time() - start:.2f} s for {args.epochs} epochs; "
          f"test accuracy {history['test_acc'][-1]:.4f}")

    os.makedirs(os.path.dirname(args.plot) or ".", exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    epochs = range(1, args.epochs + 1)
    ax1.plot(epochs, history["loss"], marker="o")
    ax1.set(title="training loss", xlabel="epoch")
    ax2.plot(epochs, history["train_acc"], marker="o", label="train")
    ax2.plot(epochs, history["test_acc"], marker="o", label="test")
    ax2.set(title="accuracy", xlabel="epoch", ylim=(0, 1))
    ax2.legend()
    fig.suptitle(f"digits CNN, singa {mode} mode")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=100)
    print(f"plot saved to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(example_cli.run(main))
