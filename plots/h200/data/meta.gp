# written by build/report from results/h200/20261130T045458Z.csv
run = "results/h200/20261130T045458Z.csv"
gpu = "h200"
mode = "cold"
npanels = 4
array panel_file[4] = ["plots/h200/data/panel_D64_full.dat", "plots/h200/data/panel_D64_causal.dat", "plots/h200/data/panel_D128_full.dat", "plots/h200/data/panel_D128_causal.dat"]
array panel_title[4] = ["head_dim 64, non-causal", "head_dim 64, causal", "head_dim 128, non-causal", "head_dim 128, causal"]
nvariants = 5
have_cudnn = 1
have_ratio = 1
peak_tflops = 798.2
ratio_file = "plots/h200/data/ratio.dat"
baseline = "results/h200/baselines/baseline-20261130T045924Z.csv"
