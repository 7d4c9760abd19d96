"""Data-parallel training of the digits CNN (train_digits.py's) over MPI with
singa.opt.DistOpt: each rank trains on its own share of every epoch, rank 0
prints the loss and accuracies averaged over the ranks.

    mpirun -np 2 .venv/bin/python examples/python/train_digits_dist.py --option fp32
    mpirun -np 2 .venv/bin/python examples/python/train_digits_dist.py --option sparseTopK --spars 0.05
    .venv/bin/python examples/python/train_digits_dist.py      # one process (world size 1)

(as root add --allow-run-as-root; in a container with fewer cores than
ranks add --oversubscribe.) --option takes fp32, fp16, partialUpdate,
sparseTopK or sparseThreshold, or several of them, each trained from the
same initial model; --json writes rank 0's results.
"""
import json
import sys
import time

import numpy as np

import example_cli
from singa import autograd, device, opt, tensor
from singa.data import batches
from train_digits import CNN, load_data

OPTIONS = ("fp32", "fp16", "partialUpdate", "sparseTopK", "sparseThreshold")
DEFAULT_SPARS = {"sparseTopK": 0.05, "sparseThreshold": 0.01}


class DistCNN(CNN):

    def train_one_batch(self, x, y, dist_option="fp32", spars=None):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        if dist_option == "fp32":
            self.optimizer.backward_and_update(loss)
        elif dist_option == "fp16":
            self.optimizer.backward_and_update_half(loss)
        elif dist_option == "partialUpdate":
            self.optimizer.backward_and_partial_update(loss)
        elif dist_option == "sparseTopK":
            self.optimizer.backward_and_sparse_update(loss, topK=True, spars=spars)
        elif dist_option == "sparseThreshold":
            self.optimizer.backward_and_sparse_update(loss, topK=False, spars=spars)
        else:
            raise ValueError(f"unknown dist option {dist_option!r}; one of {OPTIONS}")
        return out, loss


def averaged(sgd, values):
    """The mean over the ranks of a few numbers."""
    t = tensor.Tensor(data=np.asarray(values, np.float32), requires_grad=False)
    sgd.all_reduce(t)
    sgd.wait()
    return tensor.to_numpy(t)


def train(option, args, data):
    x_train, x_test, y_train, y_test = data
    dev = device.get_default_device()
    dev.SetRandSeed(args.seed)
    sgd = opt.DistOpt(opt.SGD(lr=args.lr, momentum=0.9, weight_decay=1e-5),
                      buffSize=args.buff_size)
    rank, world = sgd.global_rank, sgd.world_size
    m = DistCNN()
    m.set_optimizer(sgd)
    tx = tensor.Tensor((args.batch, 1, 8, 8), dev, requires_grad=False)
    ty = tensor.Tensor((args.batch,), dev, tensor.int32, requires_grad=False)
    m.compile([tx], is_train=True, use_graph=not args.eager, sequential=False)
    sgd.broadcast_params(m.get_params())  # one starting model whatever each rank drew

    spars = args.spars if args.spars is not None else DEFAULT_SPARS.get(option)
    # Every rank takes the same number of full batches (graph mode replays
    # one shape) from its share of a permutation all ranks agree on.
    share = len(x_train) // world
    steps = share // args.batch
    rng = np.random.default_rng(args.seed)
    mine_test = np.arange(rank, len(x_test), world)
    start = time.time()
    history = []
    for epoch in range(args.epochs):
        order = rng.permutation(len(x_train))[rank * share:(rank + 1) * share]
        total_loss, correct = 0.0, 0
        for xb, yb in batches(x_train[order], y_train[order], batch_size=args.batch,
                              drop_last=True):
            tx.copy_from_numpy(xb)
            ty.copy_from_numpy(yb)
            out, loss = m(tx, ty, option, spars)
            total_loss += float(tensor.to_numpy(loss)[0])
            correct += int((tensor.to_numpy(out).argmax(1) == yb).sum())
        m.eval()
        test_correct = 0
        for xb, yb in batches(x_test[mine_test], y_test[mine_test], batch_size=args.batch):
            pred = tensor.to_numpy(m(tensor.Tensor(data=xb, requires_grad=False)))
            test_correct += int((pred.argmax(1) == yb).sum())
        m.train()
        loss_avg, train_acc, test_hits = averaged(
            sgd, [total_loss / steps, correct / (steps * args.batch), test_correct])
        test_acc = float(test_hits) * world / len(x_test)
        history.append({"loss": float(loss_avg), "train_acc": float(train_acc),
                        "test_acc": test_acc})
        if rank == 0:
            print(f"{option:15s} epoch {epoch + 1:2d}  loss {loss_avg:.4f}  "
                  f"train acc {train_acc:.4f}  test acc {test_acc:.4f}", flush=True)
    if rank == 0:
        print(f"{option}: {world} rank(s), {time.time() - start:.2f} s for {args.epochs} epochs; "
              f"test accuracy {history[-1]['test_acc']:.4f}", flush=True)
    return history, rank


def main():
    p = example_cli.parser(__doc__)
    p.add_argument("--option", nargs="+", default=["fp32"], choices=OPTIONS,
                   help="how the ranks exchange gradients; several train one after another")
    p.add_argument("--spars", type=float, default=None,
                   help="kept fraction (sparseTopK, default 0.05) or magnitude threshold "
                        "(sparseThreshold, default 0.01)")
    p.add_argument("--epochs", type=int, default=10, help="passes over each rank's share")
    p.add_argument("--batch", type=int, default=32, help="batch size of each rank")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate")
    p.add_argument("--buff-size", type=int, default=4194304,
                   help="float32 elements of one fused message")
    p.add_argument("--eager", action="store_true", help="run eagerly instead of graph mode")
    p.add_argument("--seed", type=int, default=0, help="seed of the data split and the weights")
    p.add_argument("--json", help="rank 0 writes {option: per-epoch history} here")
    args = p.parse_args()

    data = load_data(args.seed)
    results, rank = {}, 0
    for option in args.option:
        results[option], rank = train(option, args, data)
    if args.json and rank == 0:
        with open(args.json, "w") as f:
            json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(example_cli.run(main))
