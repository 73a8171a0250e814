import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 3)
    def forward(self, x, h):
        return self.l(x) + h, x
