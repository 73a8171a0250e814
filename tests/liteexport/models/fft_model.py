"""A model using operators runtime_py does not implement (fft)."""

import torch


class UsesFft(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.fft(x).real + torch.relu(x)
